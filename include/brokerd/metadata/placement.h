#pragma once
// Where the controller puts a new partition's replicas. Pure: the same brokers, counts and
// start always give the same answer.
//
// The rule: the live brokers are ordered so that racks alternate (the first broker of each
// rack by id, then the second of each, ...). Partition p's leader is the broker at position
// (start + p) of that order, so leaders go round-robin over every broker. Its followers are
// taken walking on from the leader, skipping brokers already chosen and, while some rack has
// no replica of the partition yet, brokers of racks that have one; so replicas land on
// distinct racks whenever there are at least as many racks as replicas. From the second lap
// on, the walk starts one broker further per lap (Kafka's shift), so that the followers of a
// given leader differ from lap to lap and load spreads evenly over pairs of brokers too.
// Brokers without a rack count as one rack each.
#include <cstdint>
#include <string>
#include <vector>

#include "brokerd/metadata/metadata_image.h"

namespace brokerd::metadata {

struct PlacementBroker {
  int32_t id = 0;
  std::string rack;  // empty = none
};

// The replica lists of `partitions` partitions (the first replica is the leader). Requires
// 1 <= replication_factor <= brokers.size().
std::vector<std::vector<int32_t>> place_replicas(std::vector<PlacementBroker> brokers, int32_t partitions,
                                                 int32_t replication_factor, uint32_t start);

// The unfenced brokers of `image`, for place_replicas.
std::vector<PlacementBroker> placement_brokers(const MetadataImage& image);

}  // namespace brokerd::metadata
