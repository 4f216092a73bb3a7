// ListTransactions: the transactional ids this node coordinates, filtered by state, producer
// id, duration (v1, KIP-994) and a regular expression over the id (v2, KIP-1152); only the
// ids the caller may DESCRIBE. Unknown state names come back in unknown_state_filters and
// match nothing.
#include "brokerd/protocol/messages/list_transactions_request.h"
#include "brokerd/protocol/messages/list_transactions_response.h"
#include "brokerd/transactions/states.h"
#include "brokerd/transactions/transaction_coordinator.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {

boost::asio::awaitable<net::Response> handle_list_transactions(HandlerContext& ctx) {
  auto req = ctx.decode<protocol::ListTransactionsRequest>();
  auto& svc = ctx.services;
  protocol::ListTransactionsResponse resp;
  transactions::ListFilter filter;
  for (const auto& name : req.state_filters) {
    if (auto s = transactions::state_from_name(name)) filter.states.push_back(*s);
    else resp.unknown_state_filters.push_back(name);
  }
  if (!req.state_filters.empty() && filter.states.empty()) co_return ctx.respond(resp);
  filter.producer_ids = req.producer_id_filters;
  filter.min_duration_ms = req.duration_filter;
  filter.id_pattern = req.transactional_id_pattern;
  auto [error, listed] = co_await svc.transactions.list(std::move(filter));
  resp.error_code = protocol::code(error);
  for (const auto& l : listed) {
    if (!authorized(ctx, acl::Operation::describe, acl::ResourceType::transactional_id, l.transactional_id)) continue;
    auto& s = resp.transaction_states.emplace_back();
    s.transactional_id = l.transactional_id;
    s.producer_id = l.producer_id;
    s.transaction_state = std::string(transactions::state_name(l.state));
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
