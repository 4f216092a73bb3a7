#include "brokerd/cluster/partition_election.h"

#include <algorithm>

namespace brokerd::cluster {

std::vector<PartitionUpdate> elect_on_fence(const MetadataImage& image, int32_t broker) {
  std::vector<PartitionUpdate> out;
  image.for_each_topic([&](const TopicPtr& t) {
    for (int32_t p = 0; p < t->partition_count(); ++p) {
      const PartitionAssignment& a = t->partitions[static_cast<size_t>(p)];
      const bool in_isr = std::find(a.isr.begin(), a.isr.end(), broker) != a.isr.end();
      if (a.leader != broker && !in_isr) continue;
      PartitionChange change;
      std::vector<int32_t> isr = a.isr;
      if (in_isr && isr.size() > 1) {
        std::erase(isr, broker);
        change.isr = isr;
      }
      if (a.leader == broker) {
        int32_t next = -1;
        for (int32_t r : isr)
          if (r != broker && image.live(r)) {
            next = r;
            break;
          }
        change.leader = next;
      }
      if (change.isr || change.leader) out.push_back({t->id, p, std::move(change)});
    }
  });
  return out;
}

std::vector<PartitionUpdate> elect_on_unfence(const MetadataImage& image, int32_t broker) {
  std::vector<PartitionUpdate> out;
  image.for_each_topic([&](const TopicPtr& t) {
    for (int32_t p = 0; p < t->partition_count(); ++p) {
      const PartitionAssignment& a = t->partitions[static_cast<size_t>(p)];
      if (a.leader >= 0 || std::find(a.isr.begin(), a.isr.end(), broker) == a.isr.end()) continue;
      PartitionChange change;
      change.leader = broker;
      out.push_back({t->id, p, std::move(change)});
    }
  });
  return out;
}

}  // namespace brokerd::cluster
