// InitProducerId: a producer id and epoch for an idempotent producer, from this node's block
// of ids; with a transactional id, from that id's transaction coordinator (WRITE on the id),
// which fences the id's previous producer by bumping the epoch and aborts a transaction it
// left open (KIP-360: a producer that knows its id and epoch keeps them across the call).
#include <chrono>

#include "brokerd/common/clock.h"
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/common/logger.h"
#include "brokerd/config/broker_config.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/protocol/messages/init_producer_id_request.h"
#include "brokerd/protocol/messages/init_producer_id_response.h"
#include "brokerd/transactions/transaction_coordinator.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {
namespace {

using protocol::ErrorCode;
using protocol::InitProducerIdRequest;
using protocol::InitProducerIdResponse;

// The one place this handler's outcomes become Kafka error codes.
ErrorCode to_kafka(ErrorCode e, int16_t version) {
  // Clients before v4 do not know PRODUCER_FENCED; Kafka answers them INVALID_PRODUCER_EPOCH.
  if (e == ErrorCode::producer_fenced && version < 4) return ErrorCode::invalid_producer_epoch;
  return e;
}

}  // namespace

boost::asio::awaitable<net::Response> handle_init_producer_id(HandlerContext& ctx) {
  auto req = ctx.decode<InitProducerIdRequest>();
  auto& svc = ctx.services;
  InitProducerIdResponse resp;
  resp.producer_id = -1;
  resp.producer_epoch = -1;

  ErrorCode error = ErrorCode::none;
  if (req.transactional_id) {
    const std::string& id = *req.transactional_id;
    if (id.empty()) {
      error = ErrorCode::invalid_request;
    } else if (!authorized(ctx, acl::Operation::write, acl::ResourceType::transactional_id, id)) {
      error = ErrorCode::transactional_id_authorization_failed;
    } else if ((req.producer_id < 0) != (req.producer_epoch < 0)) {
      error = ErrorCode::invalid_request;
    } else {
      // A fresh producer id in case the coordinator needs one, from this node's block: taking
      // a new block writes to the metadata log, off the reactor.
      metadata::ProducerIdManager* ids = &svc.metadata.producer_ids();
      auto take = [ids] { return ids->next(); };
      int64_t fresh = -1;
      try {
        fresh = co_await svc.blocking.run(std::move(take));
      } catch (const std::exception& e) {
        module_logger("kafka")->error("producer id allocation failed: {}", e.what());
      }
      transactions::InitProducerIdRequest r;
      r.transactional_id = id;
      r.timeout_ms = req.transaction_timeout_ms;
      if (req.producer_id >= 0) r.expected = transactions::ProducerIdAndEpoch{req.producer_id, req.producer_epoch};
      auto answer = co_await svc.transactions.init_producer_id(std::move(r), fresh);
      error = answer.error;
      if (error == ErrorCode::none) {
        resp.producer_id = answer.producer.producer_id;
        resp.producer_epoch = answer.producer.epoch;
      }
    }
  } else if (!authorized_cluster(ctx, acl::Operation::idempotent_write) &&
             !authorized_any(ctx, acl::Operation::write, acl::ResourceType::topic)) {
    // KIP-679: WRITE on any topic is enough for an idempotent producer.
    error = ErrorCode::cluster_authorization_failed;
  } else if ((req.producer_id < 0) != (req.producer_epoch < 0)) {
    error = ErrorCode::invalid_request;  // both or neither, as Kafka requires
  } else {
    metadata::ProducerIdManager* ids = &svc.metadata.producer_ids();
    const int64_t expiration_ms = svc.config.integer("producer.id.expiration.ms");
    const int64_t pid = req.producer_id;
    const int16_t epoch = req.producer_epoch;
    // A new block of ids is written to the metadata log and fsynced: off the reactor.
    auto work = [ids, pid, epoch, expiration_ms] { return ids->init(pid, epoch, wall_clock_ms(), expiration_ms); };
    metadata::ProducerIdManager::Result r;
    try {
      r = co_await svc.blocking.run(std::move(work));
    } catch (const std::exception& e) {
      module_logger("kafka")->error("producer id allocation failed: {}", e.what());
      // Retriable for clients, as Kafka answers while no id block is available yet.
      r.error = ErrorCode::coordinator_load_in_progress;
    }
    error = r.error;
    if (error == ErrorCode::none) {
      resp.producer_id = r.producer_id;
      resp.producer_epoch = r.epoch;
    }
  }
  resp.error_code = protocol::code(to_kafka(error, ctx.version));
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
