#pragma once
// The controller's leader elections when a broker's availability changes. Pure: the image
// before the change in, the partition changes to commit with it out.
#include <cstdint>
#include <optional>
#include <vector>

#include "brokerd/cluster/metadata_image.h"

namespace brokerd::cluster {

// A change of one partition (a PartitionChangeRecord): each set field replaces the current
// one. A new leader (>= -1) bumps the leader epoch; every change bumps the partition epoch.
struct PartitionChange {
  std::optional<std::vector<int32_t>> isr;
  std::optional<int32_t> leader;
  std::optional<std::vector<int32_t>> replicas;
};

struct PartitionUpdate {
  protocol::Uuid topic_id;
  int32_t partition = 0;
  PartitionChange change;
};

// `broker` is being fenced: every partition it leads gets as leader the first other in-sync
// replica that is live, or none (-1) when there is none; it leaves the ISR of every
// partition where other members remain (the last member stays: it has every committed
// record, and leads again when it returns).
std::vector<PartitionUpdate> elect_on_fence(const MetadataImage& image, int32_t broker);

// `broker` is being unfenced: every partition without a leader whose ISR names it gets it.
std::vector<PartitionUpdate> elect_on_unfence(const MetadataImage& image, int32_t broker);

}  // namespace brokerd::cluster
