#pragma once
// One round of a mirror link against one source broker, for the mirror partitions this node
// leads whose source partitions that broker leads: read each log's end on its home shard,
// fetch from the source at those offsets (as a consumer: up to the source's high watermark),
// and append the source's batches at their own offsets. Errors are Kafka's: a moved leader
// asks for fresh metadata; an offset out of range means the source's retention ran ahead
// (the mirror restarts at the source's log start and reports what it skipped) or the source
// lost records the mirror holds (the partition stops, diverged); an unknown topic id means
// the source topic was deleted or recreated (the partition stops, source-gone).
#include <cstdint>
#include <string>
#include <vector>

#include "brokerd/partitions/topic_partition.h"
#include "brokerd/protocol/uuid.h"
#include "brokerd/quorum/voters.h"
#include "source_cluster.h"

namespace brokerd::partitions {
class MirrorStatus;
class PartitionManager;
}  // namespace brokerd::partitions

namespace brokerd::mirror {

struct MirroredPartition {
  partitions::TopicPartition tp;  // same name and index on both sides
  protocol::Uuid source_topic_id;
  bool operator==(const MirroredPartition&) const = default;
};

struct CopyOptions {
  std::string link;
  int32_t wait_max_ms = 500;
  int32_t partition_max_bytes = 1 << 20;
  int32_t response_max_bytes = 10 << 20;
};

enum class CopyResult { ok, idle, failed, stale_metadata };

CopyResult copy_round(const CopyOptions& options, partitions::PartitionManager& partitions, partitions::MirrorStatus& status,
                      SourceCluster& source, const quorum::Voter& broker, const std::vector<MirroredPartition>& parts);

}  // namespace brokerd::mirror
