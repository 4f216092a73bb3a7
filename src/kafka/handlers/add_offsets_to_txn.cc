// AddOffsetsToTxn: the group's partition of __consumer_offsets joins the producer's
// transaction, so that the offsets it then sends with TxnOffsetCommit commit or abort with it.
// WRITE on the transactional id, READ on the group.
#include "brokerd/group/group_coordinator.h"
#include "brokerd/protocol/messages/add_offsets_to_txn_request.h"
#include "brokerd/protocol/messages/add_offsets_to_txn_response.h"
#include "brokerd/transactions/transaction_coordinator.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {

boost::asio::awaitable<net::Response> handle_add_offsets_to_txn(HandlerContext& ctx) {
  auto req = ctx.decode<protocol::AddOffsetsToTxnRequest>();
  auto& svc = ctx.services;
  protocol::AddOffsetsToTxnResponse resp;
  protocol::ErrorCode error = protocol::ErrorCode::none;
  if (!authorized(ctx, acl::Operation::write, acl::ResourceType::transactional_id, req.transactional_id)) {
    error = protocol::ErrorCode::transactional_id_authorization_failed;
  } else if (!authorized_group(ctx, acl::Operation::read, req.group_id)) {
    error = protocol::ErrorCode::group_authorization_failed;
  } else {
    auto answer = co_await svc.transactions.add_offsets(req.transactional_id, req.producer_id, req.producer_epoch,
                                                        svc.groups.partition_for(req.group_id),
                                                        transactions::kTxnVersion0);
    error = transactions::fenced_error_for(answer.error, ctx.version >= 2);
  }
  resp.error_code = protocol::code(error);
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
