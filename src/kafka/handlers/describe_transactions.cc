// DescribeTransactions: each transactional id's state as its coordinator (this node) holds it;
// NOT_COORDINATOR for ids this node does not coordinate. DESCRIBE on the id; the topics of
// the transaction are shown only where the caller may DESCRIBE them, as Kafka filters them.
#include <map>

#include "brokerd/protocol/messages/describe_transactions_request.h"
#include "brokerd/protocol/messages/describe_transactions_response.h"
#include "brokerd/transactions/states.h"
#include "brokerd/transactions/transaction_coordinator.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {

boost::asio::awaitable<net::Response> handle_describe_transactions(HandlerContext& ctx) {
  auto req = ctx.decode<protocol::DescribeTransactionsRequest>();
  auto& svc = ctx.services;
  protocol::DescribeTransactionsResponse resp;
  std::vector<std::string> allowed;
  for (const auto& id : req.transactional_ids)
    if (authorized(ctx, acl::Operation::describe, acl::ResourceType::transactional_id, id)) allowed.push_back(id);
  auto described = co_await svc.transactions.describe(allowed);
  size_t next = 0;
  for (const auto& id : req.transactional_ids) {
    auto& s = resp.transaction_states.emplace_back();
    s.transactional_id = id;
    if (next >= described.size() || described[next].transactional_id != id ||
        !authorized(ctx, acl::Operation::describe, acl::ResourceType::transactional_id, id)) {
      s.error_code = protocol::code(protocol::ErrorCode::transactional_id_authorization_failed);
      continue;
    }
    const auto& d = described[next++];
    s.error_code = protocol::code(d.error);
    if (d.error != protocol::ErrorCode::none) continue;
    s.transaction_state = std::string(transactions::state_name(d.state));
    s.transaction_timeout_ms = d.timeout_ms;
    s.transaction_start_time_ms = d.txn_start_ms;
    s.producer_id = d.producer_id;
    s.producer_epoch = d.producer_epoch;
    std::map<std::string, std::vector<int32_t>> topics;
    for (const auto& tp : d.partitions)
      if (authorized_topic(ctx, acl::Operation::describe, tp.topic)) topics[tp.topic].push_back(tp.partition);
    for (auto& [name, parts] : topics) {
      auto& t = s.topics.emplace_back();
      t.topic = name;
      t.partitions = std::move(parts);
    }
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
