#pragma once
// Scrape-time metrics of the node's state: hosted partitions (size, segments, offsets) and
// consumer groups (count, lag), gathered from the shards when /metrics is read.
namespace brokerd::metrics { class Registry; }
namespace brokerd::cluster { class PartitionManager; }
namespace brokerd::group { class GroupCoordinator; }

namespace brokerd::kafka {

void register_broker_collectors(metrics::Registry& registry, cluster::PartitionManager& partitions,
                                group::GroupCoordinator& groups);

}  // namespace brokerd::kafka
