// EndTxn: commit or abort the producer's transaction (WRITE on the transactional id). The
// coordinator answers once the prepared outcome is on the in-sync replicas of its
// __transaction_state partition; the markers follow, and the next transaction of the id waits
// (CONCURRENT_TRANSACTIONS) until every partition has its marker. v5 answers the producer id
// and epoch the producer goes on with.
#include "brokerd/common/logger.h"
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/protocol/messages/end_txn_request.h"
#include "brokerd/protocol/messages/end_txn_response.h"
#include "brokerd/transactions/transaction_coordinator.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {

boost::asio::awaitable<net::Response> handle_end_txn(HandlerContext& ctx) {
  auto req = ctx.decode<protocol::EndTxnRequest>();
  auto& svc = ctx.services;
  protocol::EndTxnResponse resp;
  protocol::ErrorCode error = protocol::ErrorCode::none;
  if (!authorized(ctx, acl::Operation::write, acl::ResourceType::transactional_id, req.transactional_id)) {
    error = protocol::ErrorCode::transactional_id_authorization_failed;
  } else {
    transactions::EndTxnRequest r;
    r.transactional_id = req.transactional_id;
    r.producer_id = req.producer_id;
    r.producer_epoch = req.producer_epoch;
    r.result = req.committed ? transactions::TxnResult::commit : transactions::TxnResult::abort;
    r.client_txn_version = ctx.version >= 5 ? transactions::kTxnVersion2 : transactions::kTxnVersion0;
    // A transaction.version 2 producer at the end of its epochs goes on with a new id: taken
    // here, off the reactor, only then (a new block writes to the metadata log).
    int64_t fresh = -1;
    if (ctx.version >= 5 && transactions::epoch_exhausted(req.producer_epoch)) {
      metadata::ProducerIdManager* ids = &svc.metadata.producer_ids();
      auto take = [ids] { return ids->next(); };
      try {
        fresh = co_await svc.blocking.run(std::move(take));
      } catch (const std::exception& e) {
        module_logger("kafka")->error("producer id allocation failed: {}", e.what());
      }
    }
    auto answer = co_await svc.transactions.end_txn(std::move(r), fresh);
    error = transactions::fenced_error_for(answer.error, ctx.version >= 2);
    if (answer.error == protocol::ErrorCode::none) {
      resp.producer_id = answer.producer.producer_id;
      resp.producer_epoch = answer.producer.epoch;
    }
  }
  resp.error_code = protocol::code(error);
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
