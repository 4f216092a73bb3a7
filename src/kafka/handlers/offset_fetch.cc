// OffsetFetch: committed positions of one group (v1-7) or of several (v8+); a null topic list
// asks for every partition the group has committed. Nothing committed reads as offset -1.
// require_stable (v7+, KIP-447): a partition an open transaction holds an offset of answers
// UNSTABLE_OFFSET_COMMIT, and the consumer asks again.
// v10 names topics by id (KIP-848): an unknown id is UNKNOWN_TOPIC_ID, and a group's offsets
// listed whole leave out topics that no longer exist (they have no id to name them by).
#include <map>
#include <set>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/group/group_coordinator.h"
#include "brokerd/protocol/messages/offset_fetch_request.h"
#include "brokerd/protocol/messages/offset_fetch_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {
namespace {

using protocol::ErrorCode;
using protocol::OffsetFetchRequest;
using protocol::OffsetFetchResponse;

// The committed offsets grouped by topic, in the order the request named them.
template <typename Topic, typename Partition>
std::vector<Topic> by_topic(const group::FetchOffsetsResult& r, ErrorCode partition_error,
                            const std::set<std::string>& refused) {
  std::vector<Topic> topics;
  std::map<std::string, size_t> index;
  for (const auto& f : r.offsets) {
    auto [it, fresh] = index.try_emplace(f.key.topic, topics.size());
    if (fresh) {
      Topic t;
      t.name = f.key.topic;
      topics.push_back(std::move(t));
    }
    Partition p;
    p.partition_index = f.key.partition;
    p.committed_offset = f.entry.offset;
    p.committed_leader_epoch = f.entry.leader_epoch;
    p.metadata = f.entry.offset >= 0 ? f.entry.metadata : "";
    p.error_code = protocol::code(f.error != ErrorCode::none ? f.error : partition_error);
    if (refused.count(f.key.topic)) {
      p.committed_offset = -1;
      p.metadata = "";
      p.error_code = protocol::code(ErrorCode::topic_authorization_failed);
    }
    topics[it->second].partitions.push_back(std::move(p));
  }
  return topics;
}

template <typename Topics>
std::optional<std::vector<group::OffsetKey>> requested(const std::optional<std::vector<Topics>>& topics) {
  if (!topics) return std::nullopt;
  std::vector<group::OffsetKey> keys;
  for (const auto& t : *topics)
    for (int32_t p : t.partition_indexes) keys.push_back({t.name, p});
  return keys;
}

// v10: the request's topic ids become names; those the image does not know are taken out
// of the request and answered on their own.
std::vector<OffsetFetchRequest::OffsetFetchRequestTopics> names_from_ids(
    const metadata::MetadataImage& image, std::vector<OffsetFetchRequest::OffsetFetchRequestTopics>& topics) {
  std::vector<OffsetFetchRequest::OffsetFetchRequestTopics> unknown;
  std::erase_if(topics, [&](auto& t) {
    const metadata::TopicMetadata* meta = image.topic(t.topic_id);
    if (meta) t.name = meta->name;
    else unknown.push_back(t);
    return meta == nullptr;
  });
  return unknown;
}

// v10: each answered topic carries its id; committed offsets of deleted topics have none.
void ids_from_names(const metadata::MetadataImage& image,
                    std::vector<OffsetFetchResponse::OffsetFetchResponseTopics>& topics) {
  std::erase_if(topics, [&](auto& t) {
    const metadata::TopicMetadata* meta = image.topic(t.name);
    if (meta) t.topic_id = meta->id;
    return meta == nullptr;
  });
}

// DESCRIBE on each topic: a topic the principal may not describe is left out when the
// group's offsets are listed whole, and refused when asked for by name.
std::set<std::string> refused_topics(const HandlerContext& ctx, group::FetchOffsetsResult& r, bool asked) {
  std::map<std::string, bool> allowed;
  for (const auto& f : r.offsets)
    if (!allowed.count(f.key.topic))
      allowed[f.key.topic] = asked ? authorized_topic(ctx, acl::Operation::describe, f.key.topic)
                                   : may_see(ctx, acl::ResourceType::topic, f.key.topic);
  std::set<std::string> refused;
  for (const auto& [topic, ok] : allowed)
    if (!ok) refused.insert(topic);
  if (!asked) {
    std::erase_if(r.offsets, [&](const auto& f) { return refused.count(f.key.topic) > 0; });
    refused.clear();
  }
  return refused;
}

}  // namespace

boost::asio::awaitable<net::Response> handle_offset_fetch(HandlerContext& ctx) {
  auto req = ctx.decode<OffsetFetchRequest>();
  OffsetFetchResponse resp;
  if (ctx.version < 8) {
    std::optional<std::vector<OffsetFetchRequest::OffsetFetchRequestTopic>> topics;
    if (req.topics) topics = std::move(*req.topics);
    auto keys = requested(topics);
    group::FetchOffsetsResult r;
    if (authorized_group(ctx, acl::Operation::describe, req.group_id)) {
      r = co_await ctx.services.groups.fetch(req.group_id, keys, ctx.version >= 7 && req.require_stable);
    } else {
      r.error = ErrorCode::group_authorization_failed;
    }
    const auto refused = refused_topics(ctx, r, keys.has_value());
    if (r.error != ErrorCode::none && keys) {
      // Versions without a group error carry it on every partition.
      for (const auto& k : *keys) r.offsets.push_back({k, {}});
    }
    ErrorCode partition_error = ctx.version < 2 ? r.error : ErrorCode::none;
    resp.topics = by_topic<OffsetFetchResponse::OffsetFetchResponseTopic,
                           OffsetFetchResponse::OffsetFetchResponsePartition>(r, partition_error, refused);
    resp.error_code = protocol::code(r.error);
  } else {
    auto image = ctx.services.metadata.image();
    const bool by_id = ctx.version >= 10;
    for (auto& g : req.groups) {
      std::vector<OffsetFetchRequest::OffsetFetchRequestTopics> unknown;
      if (by_id && g.topics) unknown = names_from_ids(*image, *g.topics);
      auto keys = requested(g.topics);
      group::FetchOffsetsResult r;
      if (authorized_group(ctx, acl::Operation::describe, g.group_id)) {
        r = co_await ctx.services.groups.fetch(g.group_id, keys, req.require_stable);
      } else {
        r.error = ErrorCode::group_authorization_failed;
      }
      const auto refused = refused_topics(ctx, r, keys.has_value());
      OffsetFetchResponse::OffsetFetchResponseGroup rg;
      rg.group_id = g.group_id;
      rg.error_code = protocol::code(r.error);
      if (r.error == ErrorCode::none) {
        rg.topics = by_topic<OffsetFetchResponse::OffsetFetchResponseTopics,
                             OffsetFetchResponse::OffsetFetchResponsePartitions>(r, ErrorCode::none, refused);
        if (by_id) ids_from_names(*image, rg.topics);
        for (const auto& t : unknown) {
          OffsetFetchResponse::OffsetFetchResponseTopics rt;
          rt.topic_id = t.topic_id;
          for (int32_t p : t.partition_indexes) {
            OffsetFetchResponse::OffsetFetchResponsePartitions rp;
            rp.partition_index = p;
            rp.committed_offset = -1;
            rp.error_code = protocol::code(ErrorCode::unknown_topic_id);
            rt.partitions.push_back(std::move(rp));
          }
          rg.topics.push_back(std::move(rt));
        }
      }
      resp.groups.push_back(std::move(rg));
    }
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
