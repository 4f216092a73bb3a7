#pragma once
// Per-partition storage settings, named after Kafka's topic configs.
#include <cstdint>
#include <optional>

#include "brokerd/storage/compression.h"
#include "brokerd/storage/record_batch.h"

namespace brokerd::storage {

struct CleanupPolicy {
  bool remove = true;    // "delete": retention by time and size
  bool compact = false;  // "compact": keep the latest record per key (storage/cleaner.h)
};

struct LogConfig {
  int64_t segment_bytes = 1LL << 30;              // segment.bytes
  int64_t segment_ms = 7LL * 24 * 3600 * 1000;    // segment.ms
  int64_t segment_jitter_ms = 0;                  // segment.jitter.ms: a segment rolls up to this much earlier
  bool preallocate = false;                       // preallocate: reserve segment.bytes when a segment is made
  // message.timestamp.before.max.ms / after.max.ms: how far a CreateTime record's timestamp
  // may lie behind or ahead of the broker's clock.
  int64_t timestamp_before_max_ms = INT64_MAX;
  int64_t timestamp_after_max_ms = 3600000;
  int64_t retention_ms = 7LL * 24 * 3600 * 1000;  // retention.ms, -1 = forever
  int64_t retention_bytes = -1;                   // retention.bytes, -1 = unlimited
  int32_t max_message_bytes = 1048588;            // max.message.bytes
  int32_t index_interval_bytes = 4096;            // index.interval.bytes
  int32_t segment_index_bytes = 10 * 1024 * 1024; // segment.index.bytes
  TimestampType message_timestamp_type = TimestampType::create_time;  // message.timestamp.type
  // compression.type: nullopt ("producer") stores batches as written; a codec re-encodes
  // client batches written with another one, at compression_level (compression.<codec>.level).
  std::optional<Compression> recompress;
  int compression_level = kDefaultCompressionLevel;
  CleanupPolicy cleanup_policy;                   // cleanup.policy
  int64_t file_delete_delay_ms = 60000;           // file.delete.delay.ms
  // Compaction (used when cleanup_policy.compact).
  int64_t delete_retention_ms = 86400000;         // delete.retention.ms: tombstones' life after cleaning
  int64_t min_compaction_lag_ms = 0;              // min.compaction.lag.ms
  int64_t max_compaction_lag_ms = INT64_MAX;      // max.compaction.lag.ms
  double min_cleanable_dirty_ratio = 0.5;         // min.cleanable.dirty.ratio
  // Whether its segment files count in the node's budget of open partition files
  // (storage/file_budget.h); the metadata log's never do, so partitions cannot starve it.
  bool budgeted_files = true;
};

}  // namespace brokerd::storage
