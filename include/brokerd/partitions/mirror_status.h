#pragma once
// What this node knows of its mirror links' progress, for DescribeMirrorLinks and /metrics:
// per link, the state as this node sees it (the controller's view of the source, or its
// fetchers'), and per partition this node leads, where the mirror stands against its source.
// Thread-safe; written by the mirror threads, read by requests and scrapes.
#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "brokerd/partitions/topic_partition.h"

namespace brokerd::partitions {

struct LinkState {
  std::string state = "starting";  // starting, active, paused, source-unreachable, error
  std::string message;             // why, for anything but active
  int32_t groups_synced = 0;       // groups whose offsets the last sync copied
};

struct PartitionMirrorState {
  std::string state = "starting";  // starting, mirroring, source-gone, diverged, error
  std::string message;
  int64_t mirrored_end = 0;        // this log's end: the next source offset to copy
  int64_t source_log_start = -1;
  int64_t source_high_watermark = -1;
  int64_t skipped_records = 0;     // deleted by the source's retention before they were copied
  int64_t last_fetch_ms = -1;      // wall clock of the last answer from the source
  int64_t caught_up_ms = -1;       // wall clock when the mirror last held all the source had
  int64_t bytes_copied = 0;
  int64_t records_copied = 0;

  int64_t lag_records() const {
    return source_high_watermark < 0 ? 0 : std::max<int64_t>(0, source_high_watermark - mirrored_end);
  }
  // Bytes behind, estimated from the size of the records copied so far.
  int64_t lag_bytes() const {
    return records_copied <= 0 ? 0 : lag_records() * (bytes_copied / records_copied);
  }
  // The recovery point: everything the source held `lag_ms` ago is mirrored (0 while caught up).
  int64_t lag_ms(int64_t now_ms) const;
};

class MirrorStatus {
 public:
  void set_link(const std::string& link, LinkState state);
  LinkState link(const std::string& link) const;
  void set_partition(const std::string& link, const TopicPartition& tp, const PartitionMirrorState& state);
  std::optional<PartitionMirrorState> partition(const std::string& link, const TopicPartition& tp) const;
  void drop_partition(const std::string& link, const TopicPartition& tp);
  // Forgets links not in `keep` (removed ones).
  void retain_links(const std::vector<std::string>& keep);

  struct Entry {
    std::string link;
    TopicPartition tp;
    PartitionMirrorState state;
  };
  std::vector<Entry> partitions() const;
  std::map<std::string, LinkState> links() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, LinkState> links_;
  std::map<std::tuple<std::string, std::string, int32_t>, PartitionMirrorState> partitions_;  // link, topic, partition
};

}  // namespace brokerd::partitions
