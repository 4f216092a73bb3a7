#include "brokerd/partitions/topic_log_config.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace brokerd::partitions {

storage::LogConfig make_log_config(const metadata::ConfigMap& c) {
  auto num = [&](const char* key, int64_t fallback) {
    auto it = c.find(key);
    return it == c.end() ? fallback : std::stoll(it->second);
  };
  storage::LogConfig cfg;
  cfg.segment_bytes = num("segment.bytes", cfg.segment_bytes);
  cfg.segment_ms = num("segment.ms", cfg.segment_ms);
  cfg.segment_jitter_ms = num("segment.jitter.ms", cfg.segment_jitter_ms);
  if (auto it = c.find("preallocate"); it != c.end()) cfg.preallocate = it->second == "true";
  // message.timestamp.difference.max.ms (deprecated, gone in Kafka 4.0) bounds both sides
  // too: the stricter bound wins.
  const int64_t difference = num("message.timestamp.difference.max.ms", INT64_MAX);
  cfg.timestamp_before_max_ms = std::min<int64_t>(num("message.timestamp.before.max.ms", INT64_MAX), difference);
  cfg.timestamp_after_max_ms = std::min<int64_t>(num("message.timestamp.after.max.ms", cfg.timestamp_after_max_ms), difference);
  cfg.retention_ms = num("retention.ms", cfg.retention_ms);
  cfg.retention_bytes = num("retention.bytes", cfg.retention_bytes);
  cfg.max_message_bytes = static_cast<int32_t>(num("max.message.bytes", cfg.max_message_bytes));
  cfg.index_interval_bytes = static_cast<int32_t>(num("index.interval.bytes", cfg.index_interval_bytes));
  cfg.segment_index_bytes = static_cast<int32_t>(num("segment.index.bytes", cfg.segment_index_bytes));
  cfg.file_delete_delay_ms = num("file.delete.delay.ms", cfg.file_delete_delay_ms);
  cfg.delete_retention_ms = num("delete.retention.ms", cfg.delete_retention_ms);
  cfg.min_compaction_lag_ms = num("min.compaction.lag.ms", cfg.min_compaction_lag_ms);
  cfg.max_compaction_lag_ms = num("max.compaction.lag.ms", cfg.max_compaction_lag_ms);
  if (auto it = c.find("min.cleanable.dirty.ratio"); it != c.end()) cfg.min_cleanable_dirty_ratio = std::stod(it->second);
  if (auto it = c.find("message.timestamp.type"); it != c.end())
    cfg.message_timestamp_type =
        it->second == "LogAppendTime" ? storage::TimestampType::log_append_time : storage::TimestampType::create_time;
  if (auto it = c.find("cleanup.policy"); it != c.end()) {
    cfg.cleanup_policy.remove = it->second.find("delete") != std::string::npos;
    cfg.cleanup_policy.compact = it->second.find("compact") != std::string::npos;
  }
  if (auto it = c.find("compression.type"); it != c.end() && it->second != "producer") {
    using storage::Compression;
    const std::string& t = it->second;
    cfg.recompress = t == "gzip"     ? Compression::gzip
                     : t == "snappy" ? Compression::snappy
                     : t == "lz4"    ? Compression::lz4
                     : t == "zstd"   ? Compression::zstd
                                     : Compression::none;
    if (t == "gzip" || t == "lz4" || t == "zstd") {
      const auto level = num(("compression." + t + ".level").c_str(), INT64_MIN);
      if (level != INT64_MIN) cfg.compression_level = static_cast<int>(level);
    }
  }
  return cfg;
}

}  // namespace brokerd::partitions
