// FindCoordinator: a group's coordinator is the leader of its partition of
// __consumer_offsets (key type 0), a transactional id's the leader of its partition of
// __transaction_state (key type 1); share groups (2) are refused with INVALID_REQUEST, as
// Kafka answers a coordinator type it does not serve. v4+ batches keys. The first request
// after enough brokers have registered creates the topic, as Kafka does; until then the
// answer is COORDINATOR_NOT_AVAILABLE.
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/config/broker_config.h"
#include "brokerd/group/group_coordinator.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/protocol/messages/find_coordinator_request.h"
#include "brokerd/protocol/messages/find_coordinator_response.h"
#include "brokerd/transactions/transaction_coordinator.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {
namespace {

using protocol::ErrorCode;
using protocol::FindCoordinatorRequest;
using protocol::FindCoordinatorResponse;

constexpr int8_t kGroupKey = 0;
constexpr int8_t kTransactionKey = 1;

struct Answer {
  ErrorCode error = ErrorCode::none;
  std::optional<std::string> message;
  int32_t node_id = -1;
  std::string host;
  int32_t port = -1;
};

Answer find(const metadata::MetadataImage& image, int8_t key_type, const std::string& key, int32_t withheld,
            const std::string& listener) {
  if (key_type != kGroupKey && key_type != kTransactionKey)
    return {ErrorCode::invalid_request,
            "This broker serves group and transaction coordinators only (key types 0 and 1)."};
  const bool group = key_type == kGroupKey;
  const metadata::TopicMetadata* topic =
      image.topic(group ? group::kOffsetsTopic : transactions::kTransactionStateTopic);
  if (!topic) return {ErrorCode::coordinator_not_available, std::nullopt};
  const int32_t p = group ? group::offsets_partition_for(key, topic->partition_count())
                          : transactions::partition_for(key, topic->partition_count());
  const auto* part = topic->partition(p);
  const metadata::BrokerInfo* leader = part ? image.broker(part->leader) : nullptr;
  if (!leader || leader->fenced || leader->node_id == withheld) return {ErrorCode::coordinator_not_available, std::nullopt};
  const auto at = metadata::endpoint_for(*leader, listener);
  return {ErrorCode::none, std::nullopt, leader->node_id, at.host, at.port};
}

// DESCRIBE on the group (key type 0) before anything is said about its coordinator.
Answer find_authorized(const HandlerContext& ctx, const metadata::MetadataImage& image, int8_t key_type,
                       const std::string& key, int32_t withheld) {
  if (key_type == kGroupKey && !authorized_group(ctx, acl::Operation::describe, key))
    return {ErrorCode::group_authorization_failed, std::nullopt};
  if (key_type == kTransactionKey &&
      !authorized(ctx, acl::Operation::describe, acl::ResourceType::transactional_id, key))
    return {ErrorCode::transactional_id_authorization_failed, std::nullopt};
  return find(image, key_type, key, withheld, listener_of(ctx));
}

}  // namespace

boost::asio::awaitable<net::Response> handle_find_coordinator(HandlerContext& ctx) {
  auto req = ctx.decode<FindCoordinatorRequest>();
  auto& svc = ctx.services;
  auto image = svc.metadata.image();
  if (req.key_type == kGroupKey && !image->topic(group::kOffsetsTopic)) {
    co_await svc.blocking.run([&svc] {
      try {
        return group::ensure_offsets_topic(svc.metadata, svc.groups.settings(),
                                           static_cast<int32_t>(svc.config.integer("offsets.topic.replication.factor")));
      } catch (const std::exception&) {
        return 0;  // logged; the client retries on COORDINATOR_NOT_AVAILABLE
      }
    });
    image = svc.metadata.image();
  }
  if (req.key_type == kTransactionKey && !image->topic(transactions::kTransactionStateTopic)) {
    co_await svc.blocking.run([&svc] {
      try {
        return transactions::ensure_transaction_topic(svc.metadata, svc.transactions.settings());
      } catch (const std::exception&) {
        return 0;  // logged; the client retries on COORDINATOR_NOT_AVAILABLE
      }
    });
    image = svc.metadata.image();
  }
  FindCoordinatorResponse resp;
  const int32_t withheld = withheld_leader(svc);
  if (ctx.version < 4) {
    Answer a = find_authorized(ctx, *image, req.key_type, req.key, withheld);
    resp.error_code = protocol::code(a.error);
    resp.error_message = a.message;
    resp.node_id = a.node_id;
    resp.host = a.host;
    resp.port = a.port;
  } else {
    for (const auto& key : req.coordinator_keys) {
      Answer a = find_authorized(ctx, *image, req.key_type, key, withheld);
      FindCoordinatorResponse::Coordinator c;
      c.key = key;
      c.error_code = protocol::code(a.error);
      c.error_message = a.message;
      c.node_id = a.node_id;
      c.host = a.host;
      c.port = a.port;
      resp.coordinators.push_back(std::move(c));
    }
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
