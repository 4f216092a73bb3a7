#pragma once
// Log compaction: keeps the latest record of every key in the closed segments of a log
// whose cleanup.policy has "compact". Offsets never change: a rebuilt batch keeps its base
// offset, lastOffsetDelta and the offset deltas of the records it keeps.
//
// One pass, in three parts and on two threads:
//   1. snapshot_for_cleaning()  - on the log's owner thread, no I/O: what to read.
//   2. assess() + clean()       - anywhere else (the blocking pool): decide, build the
//                                 offset map over the dirty range, write `.cleaned` files.
//   3. install()                - on the owner thread: swap them in (Log::replace_segments).
// The caller keeps a CleanerCheckpoint per log between passes (write_cleaner_checkpoint()).
//
// Only committed records are cleaned: the range ends at the bound the caller gives (the
// partition's last stable offset: the high watermark held back by ongoing transactions).
// Records of aborted transactions (the .txnindex entries the snapshot takes) are removed and
// never index their keys. A transaction marker is kept while any batch of its transaction
// (even an empty one kept for its producer) remains before it; after that it lives like a
// tombstone: the pass that finds it so sets its delete horizon, a pass after it drops it. A record above it may still be truncated
// by a new leader, and a key's older value below it is then the only one every replica
// keeps; cleaning it away would lose an acknowledged write and leave the replicas apart.
//
// Tombstones (null values) follow KIP-534: the first pass that cleans a batch holding one
// rebuilds it with the delete-horizon attribute (bit 6) and baseTimestamp = now +
// delete.retention.ms; a pass after that horizon drops them.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "brokerd/storage/log.h"
#include "brokerd/storage/log_config.h"

namespace brokerd::storage {

struct CleanerOptions {
  size_t dedupe_buffer_bytes = 128u << 20;  // memory of one pass's offset map
  double load_factor = 0.9;
  double io_max_bytes_per_second = 0;       // reads and writes; 0 = unthrottled
  const std::atomic<bool>* abort = nullptr;  // when it turns true the pass stops (and fails)
};

// What a log remembers between passes (`cleaner-offset.checkpoint` in its directory).
struct CleanerCheckpoint {
  int64_t first_dirty_offset = 0;  // everything below has been cleaned once
  int64_t next_horizon_ms = -1;    // earliest delete horizon of kept tombstones; -1 = none
  bool operator==(const CleanerCheckpoint&) const = default;
};
inline constexpr const char* kCleanerCheckpointFile = "cleaner-offset.checkpoint";
CleanerCheckpoint read_cleaner_checkpoint(const std::filesystem::path& dir);
void write_cleaner_checkpoint(const std::filesystem::path& dir, const CleanerCheckpoint& c);

struct CleaningInput {
  std::filesystem::path dir;
  LogConfig config;
  std::vector<SegmentSnapshot> segments;  // closed segments, offset order
  int64_t log_start_offset = 0;
  int64_t high_watermark = 0;  // nothing at or above it is cleaned or lets an older record go
  CleanerCheckpoint checkpoint;
  // Offset of each idempotent producer's last batch: that batch is kept (empty if need be)
  // so the producer's sequence survives. Without it, the last batch of each producer within
  // the dirty range is kept, and empty batches of producers not seen there.
  std::optional<std::unordered_map<int64_t, int64_t>> producer_last_offsets;
  // The aborted transactions below the bound, from the segments' .txnindex.
  std::vector<AbortedTxn> aborted;
};

// Owner thread. `high_watermark`: the partition's last stable offset, as this replica knows it.
CleaningInput snapshot_for_cleaning(const Log& log, const CleanerCheckpoint& checkpoint, int64_t high_watermark);

struct CleanableRange {
  int64_t first_dirty = 0;
  // The high watermark, the active segment, or the first segment inside min.compaction.lag.ms.
  int64_t first_uncleanable = 0;
  uint64_t clean_bytes = 0;
  uint64_t dirty_bytes = 0;
  double dirty_ratio = 0;
  bool max_lag_exceeded = false;  // a dirty record older than max.compaction.lag.ms
  bool horizon_due = false;       // kept tombstones whose delete horizon has passed
  bool should_clean = false;
};

// Any thread; reads at most the first batch header of one segment.
CleanableRange assess(const CleaningInput& in, int64_t now_ms);

struct CleanerStats {
  uint64_t bytes_read = 0;     // of the segments rewritten
  uint64_t bytes_written = 0;
  uint64_t dirty_bytes = 0;    // of the dirty range indexed into the offset map
  int64_t records_read = 0;
  int64_t records_kept = 0;
  int64_t tombstones_removed = 0;
  int64_t batches_rewritten = 0;
  int64_t segments_unchanged = 0;  // lone segments that kept every batch whole: left in place
  double seconds = 0;
};

struct CleanedGroup {
  std::vector<SegmentSnapshot> replaced;  // the cleaned files take the first one's name
};

struct CleaningResult {
  std::filesystem::path dir;
  std::vector<CleanedGroup> groups;  // `.cleaned` files written, not yet installed
  CleanerCheckpoint next_checkpoint;
  CleanerStats stats;
  std::string error;                 // set when the pass failed (its files are removed)
};

// Any thread but the owner's: builds the offset map over [first_dirty, first_uncleanable)
// (stopping early when the map is full) and rewrites every closed segment below the end of
// what the map covers, merging neighbours up to segment.bytes. A lone segment that keeps
// every batch whole is left in place (no copy synced and swapped in).
CleaningResult clean(const CleaningInput& in, const CleanableRange& range, int64_t now_ms,
                     const CleanerOptions& options = {});

// Owner thread: swaps the groups in. Returns false if the log changed under the cleaner; the
// groups that could not be installed are discarded and the checkpoint must not advance.
bool install(Log& log, const CleaningResult& result, int64_t now_ms);
// Removes the `.cleaned` files of a result that will not be installed.
void discard(const CleaningResult& result);

// All three parts on the calling thread (tests, benchmarks, tools), for a log whose records
// are all committed (no replicas: the high watermark is the log end). Returns nullopt when
// the log did not need cleaning; `checkpoint` advances when it was cleaned.
std::optional<CleanerStats> clean_log_now(Log& log, CleanerCheckpoint& checkpoint, int64_t now_ms,
                                          const CleanerOptions& options = {}, bool force = false);

}  // namespace brokerd::storage
