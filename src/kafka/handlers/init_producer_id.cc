// InitProducerId: a producer id and epoch for an idempotent producer.
//
// This broker has no transaction coordinator, so a transactional id is refused with
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED: the answer a Kafka broker gives a client that may
// not use transactional ids. It is final on every client (the Java client, librdkafka and
// KafkaJS fail initTransactions at once), where COORDINATOR_NOT_AVAILABLE or NOT_COORDINATOR
// would make them retry until their timeout for a coordinator that never comes.
#include <chrono>

#include "brokerd/common/clock.h"
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/common/logger.h"
#include "brokerd/config/broker_config.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/protocol/messages/init_producer_id_request.h"
#include "brokerd/protocol/messages/init_producer_id_response.h"
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
    error = req.transactional_id->empty() ? ErrorCode::invalid_request : ErrorCode::transactional_id_authorization_failed;
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
