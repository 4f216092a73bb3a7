#pragma once
// Scrape-time metrics of the node's state: hosted partitions (size, segments, offsets) and
// consumer groups (count, lag), gathered from the shards when /metrics is read.
namespace brokerd::metrics { class Registry; }
namespace brokerd::partitions { class MirrorStatus; class PartitionManager; }
namespace brokerd::group { class GroupCoordinator; }

namespace brokerd::kafka {

void register_broker_collectors(metrics::Registry& registry, partitions::PartitionManager& partitions,
                                group::GroupCoordinator& groups);
// The progress of the mirror partitions this node leads, and its links' reach of their sources.
void register_mirror_collectors(metrics::Registry& registry, const partitions::MirrorStatus& status);

}  // namespace brokerd::kafka
