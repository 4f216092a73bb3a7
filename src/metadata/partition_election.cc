#include "brokerd/metadata/partition_election.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>


namespace brokerd::metadata {
namespace {

using replication::BrokerLiveness;
using replication::PartitionState;

int32_t min_isr_of(const TopicMetadata& t, int32_t fallback) {
  auto it = t.configs.find("min.insync.replicas");
  if (it == t.configs.end()) return fallback;
  try {
    return static_cast<int32_t>(std::stol(it->second));
  } catch (...) {
    return fallback;
  }
}

bool unclean_of(const TopicMetadata& t) {
  auto it = t.configs.find("unclean.leader.election.enable");
  return it != t.configs.end() && it->second == "true";
}

// The live brokers once `broker` is `up` (or not).
BrokerLiveness liveness(const MetadataImage& image, int32_t broker, bool up) {
  BrokerLiveness live;
  for (const auto& b : image.brokers) {
    const bool is_live = b.node_id == broker ? up : !b.fenced;
    if (is_live) live.live.push_back(b.node_id);
  }
  return live;
}

// What a partition change record must say to turn `before` into `after`.
PartitionChange change_of(const PartitionState& before, const PartitionState& after) {
  PartitionChange change;
  if (after.isr != before.isr) change.isr = after.isr;
  if (after.elr != before.elr) change.elr = after.elr;
  if (after.leader != before.leader || after.leader_epoch != before.leader_epoch) change.leader = after.leader;
  return change;
}

// Runs `rule` on every partition that names `broker` and records what changed.
template <typename Rule>
std::vector<PartitionUpdate> for_partitions_of(const MetadataImage& image, int32_t broker, Rule rule) {
  std::vector<PartitionUpdate> out;
  image.for_each_topic([&](const TopicPtr& t) {
    for (int32_t p = 0; p < t->partition_count(); ++p) {
      const PartitionAssignment& a = t->partitions[static_cast<size_t>(p)];
      if (!a.hosted_by(broker)) continue;
      const PartitionState before = replication_state(a);
      PartitionChange change = change_of(before, rule(*t, before));
      if (change.isr || change.elr || change.leader) out.push_back({t->id, p, std::move(change)});
    }
  });
  return out;
}

}  // namespace

replication::PartitionState replication_state(const PartitionAssignment& a) {
  PartitionState s;
  s.leader = a.leader;
  s.leader_epoch = a.leader_epoch;
  s.partition_epoch = a.partition_epoch;
  s.replicas = a.replicas;
  s.isr = a.isr;
  s.elr = a.elr;
  return s;
}

std::vector<PartitionUpdate> elect_on_fence(const MetadataImage& image, int32_t broker, int32_t default_min_isr,
                                            uint32_t bugs) {
  const auto live = liveness(image, broker, false);
  return for_partitions_of(image, broker, [&](const TopicMetadata& t, const PartitionState& s) {
    return replication::on_broker_fenced(s, broker, live, min_isr_of(t, default_min_isr), unclean_of(t), bugs);
  });
}

std::vector<PartitionUpdate> elect_on_unfence(const MetadataImage& image, int32_t broker, int32_t default_min_isr,
                                              uint32_t bugs) {
  (void)default_min_isr;
  const auto live = liveness(image, broker, true);
  return for_partitions_of(image, broker, [&](const TopicMetadata& t, const PartitionState& s) {
    return replication::on_broker_unfenced(s, live, unclean_of(t), bugs);
  });
}

std::vector<PartitionUpdate> elect_on_unclean_restart(const MetadataImage& image, int32_t broker,
                                                      int32_t default_min_isr, uint32_t bugs) {
  const auto live = liveness(image, broker, false);
  return for_partitions_of(image, broker, [&](const TopicMetadata& t, const PartitionState& s) {
    return replication::on_broker_unclean_restart(s, broker, live, min_isr_of(t, default_min_isr), unclean_of(t),
                                                   bugs);
  });
}

namespace {

const char* strategy_of(ElectionType type) {
  return type == ElectionType::preferred ? "PreferredReplicaPartitionLeaderElectionStrategy"
                                         : "UncleanPartitionLeaderElectionStrategy";
}

}  // namespace

Elections elect_leaders(const MetadataImage& image, const std::optional<std::vector<ElectionTarget>>& targets,
                        ElectionType type) {
  Elections out;
  const BrokerLiveness live = liveness(image, replication::kNoBroker, false);  // as registered
  auto elect = [&](const TopicMetadata& t, int32_t p, bool answer_not_needed) {
    const PartitionAssignment& a = t.partitions[static_cast<size_t>(p)];
    const PartitionState before = replication_state(a);
    const auto outcome =
        type == ElectionType::preferred ? replication::elect_preferred(before, live) : replication::elect_unclean(before, live);
    if (outcome.error == protocol::ErrorCode::none) out.updates.push_back({t.id, p, change_of(before, outcome.next)});
    if (outcome.error == protocol::ErrorCode::election_not_needed && !answer_not_needed) return;
    ElectionResult r{t.name, p, outcome.error, {}};
    if (outcome.error == protocol::ErrorCode::election_not_needed)
      r.message = fmt::format("Leader election not needed for topic partition {}-{}", t.name, p);
    else if (outcome.error != protocol::ErrorCode::none)
      r.message = fmt::format("Failed to elect leader for partition {}-{} under strategy {}", t.name, p, strategy_of(type));
    out.results.push_back(std::move(r));
  };
  if (!targets) {
    image.for_each_topic([&](const TopicPtr& t) {
      for (int32_t p = 0; p < t->partition_count(); ++p) elect(*t, p, false);
    });
    return out;
  }
  for (const auto& target : *targets) {
    const TopicMetadata* t = image.topic(target.topic);
    if (!t || !t->partition(target.partition)) {
      out.results.push_back({target.topic, target.partition, protocol::ErrorCode::unknown_topic_or_partition,
                             "The partition does not exist."});
      continue;
    }
    elect(*t, target.partition, true);
  }
  return out;
}

std::vector<PartitionUpdate> rebalance_leaders(const MetadataImage& image, int32_t imbalance_percent) {
  struct Share {
    int64_t preferred = 0;
    std::vector<std::pair<TopicPtr, int32_t>> not_led;
  };
  std::map<int32_t, Share> by_broker;
  image.for_each_topic([&](const TopicPtr& t) {
    for (int32_t p = 0; p < t->partition_count(); ++p) {
      const PartitionAssignment& a = t->partitions[static_cast<size_t>(p)];
      if (a.replicas.empty()) continue;
      Share& s = by_broker[a.replicas.front()];
      ++s.preferred;
      if (a.leader != a.replicas.front()) s.not_led.emplace_back(t, p);
    }
  });
  const BrokerLiveness live = liveness(image, replication::kNoBroker, false);  // as registered
  std::vector<PartitionUpdate> out;
  for (const auto& [broker, share] : by_broker) {
    if (!live.is_live(broker) || share.not_led.empty()) continue;
    if (static_cast<int64_t>(share.not_led.size()) * 100 <= share.preferred * imbalance_percent) continue;
    for (const auto& [t, p] : share.not_led) {
      const PartitionState before = replication_state(t->partitions[static_cast<size_t>(p)]);
      const auto outcome = replication::elect_preferred(before, live);
      if (outcome.error == protocol::ErrorCode::none) out.push_back({t->id, p, change_of(before, outcome.next)});
    }
  }
  return out;
}

}  // namespace brokerd::metadata
