#include "brokerd/cluster/partition_election.h"

#include <algorithm>
#include <string>


namespace brokerd::cluster {
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

// Runs `rule` on every partition that names `broker` and records what changed.
template <typename Rule>
std::vector<PartitionUpdate> for_partitions_of(const MetadataImage& image, int32_t broker, Rule rule) {
  std::vector<PartitionUpdate> out;
  image.for_each_topic([&](const TopicPtr& t) {
    for (int32_t p = 0; p < t->partition_count(); ++p) {
      const PartitionAssignment& a = t->partitions[static_cast<size_t>(p)];
      if (!a.hosted_by(broker)) continue;
      const PartitionState before = replication_state(a);
      const PartitionState after = rule(*t, before);
      PartitionChange change;
      if (after.isr != before.isr) change.isr = after.isr;
      if (after.elr != before.elr) change.elr = after.elr;
      if (after.leader != before.leader || after.leader_epoch != before.leader_epoch) change.leader = after.leader;
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

}  // namespace brokerd::cluster
