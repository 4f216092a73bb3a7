// Metadata: brokers, and topics with their partitions, leaders and replicas; creates
// unknown topics when the request and auto.create.topics.enable allow it.
#include <algorithm>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/config/broker_config.h"
#include "kafka/handlers/config_resources.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/protocol/messages/metadata_request.h"
#include "brokerd/protocol/messages/metadata_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {
namespace {

using protocol::ErrorCode;
using protocol::MetadataRequest;
using protocol::MetadataResponse;

// Each partition as the image assigns it; replicas on brokers that are fenced or gone are
// offline, and a partition without a leader (or led by `withheld`, see withheld_leader)
// answers LEADER_NOT_AVAILABLE.
MetadataResponse::MetadataResponseTopic describe_topic(const metadata::TopicMetadata& t, const metadata::MetadataImage& image,
                                                       int32_t withheld) {
  MetadataResponse::MetadataResponseTopic out;
  out.name = t.name;
  out.topic_id = t.id;
  out.is_internal = t.internal;
  out.partitions.reserve(t.partitions.size());
  for (int32_t p = 0; p < t.partition_count(); ++p) {
    const metadata::PartitionAssignment& a = t.partitions[static_cast<size_t>(p)];
    MetadataResponse::MetadataResponsePartition part;
    part.partition_index = p;
    part.leader_id = a.leader == withheld ? -1 : a.leader;
    part.leader_epoch = a.leader_epoch;
    part.replica_nodes = a.replicas;
    part.isr_nodes = a.isr;
    part.offline_replicas = image.offline_replicas(a);
    if (part.leader_id < 0) part.error_code = protocol::code(ErrorCode::leader_not_available);
    out.partitions.push_back(std::move(part));
  }
  return out;
}

MetadataResponse::MetadataResponseTopic topic_error(std::optional<std::string> name, protocol::Uuid id, ErrorCode e) {
  MetadataResponse::MetadataResponseTopic out;
  out.name = std::move(name);
  out.topic_id = id;
  out.error_code = protocol::code(e);
  return out;
}

}  // namespace

boost::asio::awaitable<net::Response> handle_metadata(HandlerContext& ctx) {
  auto req = ctx.decode<MetadataRequest>();
  auto& svc = ctx.services;
  auto image = svc.metadata.image();
  const int32_t withheld = withheld_leader(svc);

  MetadataResponse resp;
  for (const auto& b : image->brokers) {
    if (b.fenced) continue;  // registered but not serving
    MetadataResponse::MetadataResponseBroker broker;
    broker.node_id = b.node_id;
    const auto at = metadata::endpoint_for(b, listener_of(ctx));
    broker.host = at.host;
    broker.port = at.port;
    if (!b.rack.empty()) broker.rack = b.rack;
    resp.brokers.push_back(std::move(broker));
  }
  resp.cluster_id = image->cluster_id;
  resp.controller_id = svc.metadata.controller_for_clients();
  // The operations the principal may do, when asked (v8+ for topics, v8-10 for the cluster;
  // later clients ask DescribeCluster); unasked they keep the schema's default.
  if (ctx.version >= 8 && ctx.version <= 10 && req.include_cluster_authorized_operations)
    resp.cluster_authorized_operations = authorized_operations(ctx, acl::ResourceType::cluster, acl::kClusterName);
  const bool topic_operations = ctx.version >= 8 && req.include_topic_authorized_operations;
  auto describe = [&](const metadata::TopicMetadata& t, const metadata::MetadataImage& in) {
    auto out = describe_topic(t, in, withheld);
    if (topic_operations) out.topic_authorized_operations = authorized_operations(ctx, acl::ResourceType::topic, t.name);
    return out;
  };

  // v0 sends an empty list for "all topics"; later versions send null.
  bool all_topics = !req.topics.has_value() || (ctx.version == 0 && req.topics->empty());
  if (all_topics) {
    std::vector<const metadata::TopicMetadata*> all;
    all.reserve(image->topic_count());
    // Only the topics the principal may DESCRIBE are listed.
    image->for_each_topic([&](const metadata::TopicPtr& t) {
      if (may_see(ctx, acl::ResourceType::topic, t->name)) all.push_back(t.get());
    });
    std::sort(all.begin(), all.end(), [](const auto* a, const auto* b) { return a->name < b->name; });
    resp.topics.reserve(all.size());
    for (const auto* t : all) resp.topics.push_back(describe(*t, *image));
    co_return ctx.respond(resp);
  }

  bool may_create = broker_setting(svc, "auto.create.topics.enable") == "true" && (ctx.version < 4 || req.allow_auto_topic_creation);
  for (const auto& requested : *req.topics) {
    if (!requested.name.has_value()) {
      // Lookup by topic id (v10+).
      const auto* t = image->topic(requested.topic_id);
      if (t && !authorized_topic(ctx, acl::Operation::describe, t->name)) {
        std::optional<std::string> no_name = ctx.version >= 12 ? std::nullopt : std::optional<std::string>("");
        resp.topics.push_back(topic_error(std::move(no_name), requested.topic_id, ErrorCode::topic_authorization_failed));
      } else if (t) {
        resp.topics.push_back(describe(*t, *image));
      } else {
        // The response name is nullable from v12 only: v10-11 answer with an empty name.
        std::optional<std::string> no_name = ctx.version >= 12 ? std::nullopt : std::optional<std::string>("");
        resp.topics.push_back(topic_error(std::move(no_name), requested.topic_id, ErrorCode::unknown_topic_id));
      }
      continue;
    }
    const std::string& name = *requested.name;
    if (!authorized_topic(ctx, acl::Operation::describe, name)) {
      resp.topics.push_back(topic_error(name, {}, ErrorCode::topic_authorization_failed));
      continue;
    }
    if (const auto* t = image->topic(name)) {
      resp.topics.push_back(describe(*t, *image));
      continue;
    }
    if (!metadata::valid_topic_name(name)) {
      resp.topics.push_back(topic_error(name, {}, ErrorCode::invalid_topic_exception));
      continue;
    }
    if (!may_create || metadata::is_internal_topic(name)) {
      resp.topics.push_back(topic_error(name, {}, ErrorCode::unknown_topic_or_partition));
      continue;
    }
    // Auto-creation needs CREATE on the cluster or on the topic, as CreateTopics does.
    if (!authorized_cluster(ctx, acl::Operation::create) && !authorized_topic(ctx, acl::Operation::create, name)) {
      resp.topics.push_back(topic_error(name, {}, ErrorCode::topic_authorization_failed));
      continue;
    }
    auto partitions = static_cast<int32_t>(broker_integer(svc, "num.partitions"));
    auto rf = static_cast<int32_t>(broker_integer(svc, "default.replication.factor"));
    auto change = co_await svc.blocking.run([&] { return svc.metadata.create_topic(name, partitions, rf, {}, false, {}, principal_of(ctx)); });
    if (change.error == ErrorCode::topic_already_exists) {
      // Created elsewhere meanwhile: describe it if this node knows it yet, else the client
      // retries (LEADER_NOT_AVAILABLE, what Kafka answers for a topic being created).
      change.topic = nullptr;
      change.error = ErrorCode::leader_not_available;
    }
    if (change.image) co_await svc.partitions.reconcile(change.image);
    const metadata::TopicMetadata* created = change.topic ? change.topic.get() : svc.metadata.image()->topic(name);
    if (created) {
      resp.topics.push_back(describe(*created, *svc.metadata.image()));
    } else {
      resp.topics.push_back(topic_error(name, {}, change.error == ErrorCode::none ? ErrorCode::leader_not_available : change.error));
    }
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
