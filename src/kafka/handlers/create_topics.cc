// CreateTopics: validates each topic (counts or a manual assignment, configs), creates the
// valid ones together off the reactor (one change of the metadata log for many topics), and
// answers once the partition logs this node hosts exist.
// From v5 a created topic's answer carries its partition count, replication factor and
// every config with its source.
#include <fmt/format.h>

#include <map>
#include <set>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/config/broker_config.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/protocol/messages/create_topics_request.h"
#include "brokerd/protocol/messages/create_topics_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"
#include "kafka/handlers/config_resources.h"
#include "kafka/quotas.h"

namespace brokerd::kafka {
namespace {

using protocol::CreateTopicsRequest;
using protocol::CreateTopicsResponse;
using protocol::ErrorCode;

struct Plan {
  ErrorCode error = ErrorCode::none;
  std::string message;
  int32_t partitions = 0;
  int32_t replication_factor = 0;
  std::map<std::string, std::string> configs;
  std::vector<std::vector<int32_t>> assignment;  // manual, by partition; empty = placed by the controller
};

Plan refuse(ErrorCode e, std::string message) {
  Plan p;
  p.error = e;
  p.message = std::move(message);
  return p;
}

// A manual assignment names each broker once per partition, for partitions 0..n-1, with as
// many replicas for each (the controller checks that the brokers are live).
Plan plan_assignment(const CreateTopicsRequest::CreatableTopic& t) {
  if (t.num_partitions != -1 || t.replication_factor != -1)
    return refuse(ErrorCode::invalid_request,
                  "Both numPartitions or replicationFactor and replicasAssignments were set. "
                  "Both cannot be used at the same time.");
  std::set<int32_t> indexes;
  size_t replicas = t.assignments.front().broker_ids.size();
  for (const auto& a : t.assignments) {
    if (!indexes.insert(a.partition_index).second || a.partition_index < 0)
      return refuse(ErrorCode::invalid_replica_assignment,
                    "Partitions should be a consecutive 0-based integer sequence.");
    if (a.broker_ids.empty())
      return refuse(ErrorCode::invalid_replica_assignment,
                    fmt::format("The manual partition assignment specifies an empty replica list for partition {}.",
                                a.partition_index));
    if (a.broker_ids.size() != replicas)
      return refuse(ErrorCode::invalid_replica_assignment, "All partitions should have the same number of replicas.");
    std::set<int32_t> brokers;
    for (int32_t b : a.broker_ids) {
      if (!brokers.insert(b).second)
        return refuse(ErrorCode::invalid_replica_assignment,
                      fmt::format("The manual partition assignment includes the broker {} more than once.", b));
    }
  }
  if (*indexes.rbegin() != static_cast<int32_t>(indexes.size()) - 1)
    return refuse(ErrorCode::invalid_replica_assignment, "Partitions should be a consecutive 0-based integer sequence.");
  Plan p;
  p.partitions = static_cast<int32_t>(indexes.size());
  p.replication_factor = static_cast<int32_t>(replicas);
  p.assignment.resize(indexes.size());
  for (const auto& a : t.assignments) p.assignment[static_cast<size_t>(a.partition_index)] = a.broker_ids;
  return p;
}

Plan plan(const CreateTopicsRequest::CreatableTopic& t, const Services& svc) {
  Plan p;
  if (!t.assignments.empty()) {
    p = plan_assignment(t);
    if (p.error != ErrorCode::none) return p;
  } else {
    if (t.num_partitions == 0 || t.num_partitions < -1)
      return refuse(ErrorCode::invalid_partitions, "Number of partitions was set to an invalid non-positive value.");
    if (t.replication_factor == 0 || t.replication_factor < -1)
      return refuse(ErrorCode::invalid_replication_factor,
                    "Replication factor must be larger than 0, or -1 to use the default value.");
    p.partitions = t.num_partitions == -1 ? static_cast<int32_t>(broker_integer(svc, "num.partitions")) : t.num_partitions;
    p.replication_factor = t.replication_factor == -1
                               ? static_cast<int32_t>(broker_integer(svc, "default.replication.factor"))
                               : t.replication_factor;
  }
  std::string nulls;
  for (const auto& c : t.configs) {
    if (!c.value) {
      nulls += (nulls.empty() ? "" : ",") + c.name;
      continue;
    }
    p.configs[c.name] = *c.value;
  }
  if (!nulls.empty()) return refuse(ErrorCode::invalid_config, "Null value not supported for topic configs: " + nulls);
  return p;
}

}  // namespace

boost::asio::awaitable<net::Response> handle_create_topics(HandlerContext& ctx) {
  auto req = ctx.decode<CreateTopicsRequest>();
  auto& svc = ctx.services;

  // A name given twice is refused, once, in place of all its entries (as Kafka does).
  std::map<std::string, int> count;
  for (const auto& t : req.topics) ++count[t.name];

  struct Slot {
    const CreateTopicsRequest::CreatableTopic* topic;
    Plan plan;
    metadata::TopicChange change;
  };
  std::vector<Slot> slots;
  std::set<std::string> answered;
  // CREATE on the cluster allows every topic; else CREATE on each topic is needed.
  const bool may_create_any = authorized_cluster(ctx, acl::Operation::create);
  for (const auto& t : req.topics) {
    if (!answered.insert(t.name).second) continue;
    Plan p = count[t.name] > 1 ? refuse(ErrorCode::invalid_request, "Duplicate topic name.")
             : !may_create_any && !authorized_topic(ctx, acl::Operation::create, t.name)
                 ? refuse(ErrorCode::topic_authorization_failed, "Not authorized to create this topic.")
                 : plan(t, svc);
    slots.push_back({&t, std::move(p), {}});
  }

  // controller_mutation_rate (KIP-599): each topic's partitions, in request order; from v6 a
  // client in debt has the rest refused.
  int64_t throttle_ms = 0;
  for (auto& s : slots) {
    if (s.plan.error != ErrorCode::none || req.validate_only) continue;
    if (!take_mutations(ctx, s.plan.partitions, ctx.version >= 6, throttle_ms))
      s.plan = refuse(ErrorCode::throttling_quota_exceeded, "The throttling quota has been exceeded.");
  }
  mute(ctx, throttle_ms);

  bool validate_only = req.validate_only;
  const std::string& owner = principal_of(ctx);
  co_await svc.blocking.run([&] {
    std::vector<metadata::TopicSpec> specs;
    std::vector<Slot*> asked;
    for (auto& s : slots) {
      if (s.plan.error != ErrorCode::none) continue;
      metadata::TopicSpec& spec = specs.emplace_back();
      spec.name = s.topic->name;
      spec.partitions = s.plan.partitions;
      spec.replication_factor = s.plan.replication_factor;
      spec.configs = s.plan.configs;
      spec.assignment = s.plan.assignment;
      spec.owner = owner;
      asked.push_back(&s);
    }
    auto changes = svc.metadata.create_topics(std::move(specs), validate_only);
    for (size_t k = 0; k < changes.size(); ++k) asked[k]->change = std::move(changes[k]);
    return 0;
  });
  // Each published image includes the earlier ones: reconciling the newest covers them all.
  std::shared_ptr<const metadata::MetadataImage> newest;
  for (const auto& s : slots)
    if (s.change.image && (!newest || s.change.image->offset > newest->offset)) newest = s.change.image;
  if (newest) co_await svc.partitions.reconcile(newest);

  CreateTopicsResponse resp;
  for (auto& s : slots) {
    CreateTopicsResponse::CreatableTopicResult r;
    r.name = s.topic->name;
    ErrorCode error = s.plan.error != ErrorCode::none ? s.plan.error : s.change.error;
    r.error_code = protocol::code(error);
    if (error != ErrorCode::none) {
      r.error_message = s.plan.error != ErrorCode::none ? s.plan.message : s.change.message;
      if (r.error_message->empty()) r.error_message = std::string(protocol::error_name(error));
      resp.topics.push_back(std::move(r));
      continue;
    }
    r.error_message = std::nullopt;
    const auto& topic = *s.change.topic;
    if (ctx.version >= 7) r.topic_id = topic.id;
    if (ctx.version < 5) {
      resp.topics.push_back(std::move(r));
      continue;
    }
    // The configs, partition count and replication factor are described only to a principal
    // that may DESCRIBE_CONFIGS the topic; for another Kafka answers TOPIC_AUTHORIZATION_FAILED
    // in topic_config_error_code and leaves them out.
    if (!permits(ctx, acl::Operation::describe_configs, acl::ResourceType::topic, topic.name)) {
      r.topic_config_error_code = protocol::code(ErrorCode::topic_authorization_failed);
      r.configs = std::vector<CreateTopicsResponse::CreatableTopicConfigs>{};
      resp.topics.push_back(std::move(r));
      continue;
    }
    r.num_partitions = topic.partition_count();
    r.replication_factor = static_cast<int16_t>(topic.replication_factor());
    r.topic_config_error_code = 0;
    std::vector<CreateTopicsResponse::CreatableTopicConfigs> configs;
    const auto image = svc.metadata.image();
    const BrokerSettings broker{svc.config, *image->broker_configs, svc.node_id};
    for (const auto& e : topic_config_entries(broker, svc.partitions.topic_defaults(), topic.configs)) {
      CreateTopicsResponse::CreatableTopicConfigs c;
      c.name = e.name;
      c.value = e.value;
      c.read_only = e.read_only;
      c.config_source = e.source;
      c.is_sensitive = false;
      configs.push_back(std::move(c));
    }
    r.configs = std::move(configs);
    resp.topics.push_back(std::move(r));
  }
  resp.throttle_time_ms = static_cast<int32_t>(throttle_ms);
  co_await answer_later(ctx, throttle_ms, 3);
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
