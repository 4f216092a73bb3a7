#include "offset_sync.h"

#include <fmt/format.h>

#include <set>

#include "brokerd/common/logger.h"
#include "brokerd/protocol/error_code.h"
#include "brokerd/protocol/messages/find_coordinator_request.h"
#include "brokerd/protocol/messages/find_coordinator_response.h"
#include "brokerd/protocol/messages/list_groups_request.h"
#include "brokerd/protocol/messages/list_groups_response.h"
#include "brokerd/protocol/messages/list_offsets_request.h"
#include "brokerd/protocol/messages/list_offsets_response.h"
#include "brokerd/protocol/messages/offset_commit_request.h"
#include "brokerd/protocol/messages/offset_commit_response.h"
#include "brokerd/protocol/messages/offset_fetch_request.h"
#include "brokerd/protocol/messages/offset_fetch_response.h"

namespace brokerd::mirror {
namespace {

using protocol::ErrorCode;

constexpr int16_t kListGroupsVersion = 4, kFindCoordinatorVersion = 4, kOffsetFetchVersion = 7,
                  kOffsetCommitVersion = 8, kListOffsetsVersion = 7;

using Offsets = std::map<std::pair<std::string, int32_t>, std::pair<int64_t, std::optional<std::string>>>;

// Coordinators of `groups` in a cluster (FindCoordinator v4, batched), by group.
std::map<std::string, quorum::Voter> coordinators(SourceCluster& cluster, const std::vector<quorum::Voter>& brokers,
                                                  const std::vector<std::string>& groups, std::string& error) {
  std::map<std::string, quorum::Voter> out;
  protocol::FindCoordinatorRequest req;
  req.key_type = 0;
  req.coordinator_keys = groups;
  for (const auto& b : brokers) {
    auto resp = cluster.call<protocol::FindCoordinatorResponse>(b, kFindCoordinatorVersion, req, error);
    if (!resp) continue;
    for (const auto& c : resp->coordinators)
      if (c.error_code == 0) out[c.key] = quorum::Voter{c.node_id, c.host, static_cast<uint16_t>(c.port)};
    return out;
  }
  return out;
}

// High watermarks of this cluster's partitions (ListOffsets latest to each leader).
std::map<std::pair<std::string, int32_t>, int64_t> high_watermarks(SourceCluster& here, const metadata::MetadataImage& image,
                                                                   const std::set<std::pair<std::string, int32_t>>& wanted) {
  std::map<int32_t, protocol::ListOffsetsRequest> by_leader;
  for (const auto& [topic, partition] : wanted) {
    const metadata::TopicMetadata* t = image.topic(topic);
    const metadata::PartitionAssignment* a = t ? t->partition(partition) : nullptr;
    if (!a || a->leader < 0) continue;
    auto& req = by_leader[a->leader];
    req.replica_id = -1;
    if (req.topics.empty() || req.topics.back().name != topic) req.topics.emplace_back().name = topic;
    auto& p = req.topics.back().partitions.emplace_back();
    p.partition_index = partition;
    p.timestamp = -1;
  }
  std::map<std::pair<std::string, int32_t>, int64_t> out;
  for (const auto& [leader, req] : by_leader) {
    const metadata::BrokerInfo* b = image.broker(leader);
    if (!b) continue;
    std::string error;
    auto resp = here.call<protocol::ListOffsetsResponse>(quorum::Voter{b->node_id, b->host, static_cast<uint16_t>(b->port)},
                                                         kListOffsetsVersion, req, error);
    if (!resp) continue;
    for (const auto& t : resp->topics)
      for (const auto& p : t.partitions)
        if (p.error_code == 0) out[{t.name, p.partition_index}] = p.offset;
  }
  return out;
}

}  // namespace

OffsetSyncResult sync_offsets(const metadata::MirrorLink& link, const SourceMetadata& source, SourceCluster& client,
                              SourceCluster& here, const metadata::MetadataImage& image, CommittedOffsets& committed) {
  OffsetSyncResult result;
  auto problem = [&result](std::string p) {
    if (result.problem.empty()) result.problem = std::move(p);
  };
  std::vector<quorum::Voter> source_brokers;
  for (const auto& [id, b] : source.brokers) source_brokers.push_back(b);

  // The source's groups the link names (ListGroups asks each broker for the groups it coordinates).
  std::set<std::string> groups;
  for (const auto& b : source_brokers) {
    std::string error;
    auto resp = client.call<protocol::ListGroupsResponse>(b, kListGroupsVersion, protocol::ListGroupsRequest{}, error);
    if (!resp) {
      problem("cannot list the source's groups: " + error);
      continue;
    }
    for (const auto& g : resp->groups)
      if (link.mirrors_group(g.group_id)) groups.insert(g.group_id);
  }
  for (const auto& g : link.groups) groups.insert(g);  // named ones even while the source's broker list lags
  if (groups.empty()) return result;

  // The mirror topics of this link, by source topic id (positions of other topics are not copied).
  std::map<std::string, protocol::Uuid> mirrors;
  image.for_each_topic([&](const metadata::TopicPtr& t) {
    if (t->mirror_link == link.name) mirrors[t->name] = t->source_topic_id;
  });

  std::vector<std::string> group_list(groups.begin(), groups.end());
  std::string error;
  auto source_coordinators = coordinators(client, source_brokers, group_list, error);
  std::map<std::string, Offsets> wanted;
  std::set<std::pair<std::string, int32_t>> partitions;
  for (const auto& g : group_list) {
    auto c = source_coordinators.find(g);
    if (c == source_coordinators.end()) continue;
    protocol::OffsetFetchRequest req;
    req.group_id = g;
    req.topics = std::nullopt;  // every committed offset
    auto resp = client.call<protocol::OffsetFetchResponse>(c->second, kOffsetFetchVersion, req, error);
    if (!resp || resp->error_code != 0) {
      problem(fmt::format("cannot read group {} on the source: {}", g,
                          resp ? protocol::error_name(static_cast<ErrorCode>(resp->error_code)) : error));
      continue;
    }
    for (const auto& t : resp->topics) {
      auto m = mirrors.find(t.name);
      auto s = source.topics.find(t.name);
      if (m == mirrors.end() || s == source.topics.end() || s->second.id != m->second) continue;
      for (const auto& p : t.partitions) {
        if (p.error_code != 0 || p.committed_offset < 0) continue;
        wanted[g][{t.name, p.partition_index}] = {p.committed_offset, p.metadata};
        partitions.insert({t.name, p.partition_index});
      }
    }
  }
  if (wanted.empty()) return result;

  const auto hws = high_watermarks(here, image, partitions);
  std::vector<quorum::Voter> own;
  for (const auto& b : image.brokers)
    if (!b.fenced) own.push_back(quorum::Voter{b.node_id, b.host, static_cast<uint16_t>(b.port)});
  std::vector<std::string> wanted_groups;
  for (const auto& [g, o] : wanted) wanted_groups.push_back(g);
  auto own_coordinators = coordinators(here, own, wanted_groups, error);
  for (const auto& [g, offsets] : wanted) {
    protocol::OffsetCommitRequest req;
    req.group_id = g;
    req.generation_id_or_member_epoch = -1;
    std::vector<std::tuple<std::string, int32_t, int64_t>> sent;
    bool in_step = true;
    for (const auto& [tp, value] : offsets) {
      auto hw = hws.find(tp);
      if (hw == hws.end()) {
        in_step = false;
        continue;
      }
      const int64_t offset = std::min(value.first, hw->second);
      in_step = in_step && offset == value.first;
      auto key = std::tuple{g, tp.first, tp.second};
      auto last = committed.find(key);
      if (last != committed.end() && last->second == offset) continue;
      if (req.topics.empty() || req.topics.back().name != tp.first) req.topics.emplace_back().name = tp.first;
      auto& p = req.topics.back().partitions.emplace_back();
      p.partition_index = tp.second;
      p.committed_offset = offset;
      p.committed_metadata = value.second;
      sent.emplace_back(tp.first, tp.second, offset);
    }
    if (sent.empty()) {
      result.groups_synced += in_step ? 1 : 0;
      continue;
    }
    auto c = own_coordinators.find(g);
    if (c == own_coordinators.end()) {
      problem("no coordinator here for group " + g);
      continue;
    }
    auto resp = here.call<protocol::OffsetCommitResponse>(c->second, kOffsetCommitVersion, req, error);
    if (!resp) {
      problem(fmt::format("cannot commit group {} here: {}", g, error));
      continue;
    }
    bool all_ok = true;
    for (const auto& t : resp->topics) {
      for (const auto& p : t.partitions) {
        const auto e = static_cast<ErrorCode>(p.error_code);
        if (e == ErrorCode::none) {
          for (const auto& [topic, partition, offset] : sent)
            if (topic == t.name && partition == p.partition_index) committed[{g, topic, partition}] = offset;
        } else {
          all_ok = false;
          // Members here: the group already moved to this cluster, its own commits rule.
          if (e != ErrorCode::unknown_member_id && e != ErrorCode::illegal_generation &&
              e != ErrorCode::rebalance_in_progress)
            problem(fmt::format("committing group {} here: {}", g, protocol::error_name(e)));
        }
      }
    }
    result.groups_synced += all_ok && in_step ? 1 : 0;
  }
  return result;
}

}  // namespace brokerd::mirror
