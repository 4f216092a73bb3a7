#pragma once
// The log of one partition: a directory `<topic>-<partition>/` of segments. Offsets are
// assigned here, batches are stored exactly as received, reads return file slices.
//
// Threading: a Log is used from one thread at a time (its partition's home thread). Only
// fdatasync may run elsewhere: take flush_target() on the owner thread, sync the handles
// on a blocking pool, then call mark_flushed() back on the owner thread.
//
// Where each part lives: log.cc (opening, recovery, truncation, the checkpoint),
// log_append.cc (appends and rolls), log_read.cc, log_retention.cc (retention and deletion),
// log_flush.cc (flushes and durability), log_compaction.cc (the cleaner's swaps),
// producer_state_log.cc (producer state at append and load), log_txn.cc (transaction markers,
// the first unstable offset and the aborted transactions of a read).
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "brokerd/common/bytes.h"
#include "brokerd/protocol/error_code.h"
#include "brokerd/protocol/records.h"
#include "brokerd/storage/control_batch.h"
#include "brokerd/storage/log_config.h"
#include "brokerd/storage/producer_state.h"
#include "brokerd/storage/record_batch.h"
#include "brokerd/storage/segment.h"
#include "brokerd/storage/txn_index.h"

namespace brokerd::storage {

struct BatchInfo;
class RecordBatchView;

// Who appends. Client batches follow the Produce rules (exactly one batch per partition, so
// that one acknowledgement describes exactly what was written); the node's own writers (the
// group coordinator, the metadata log) may write several batches at once.
enum class AppendOrigin : uint8_t { client, coordinator, internal };

struct AppendResult {
  ErrorCode error = ErrorCode::none;
  std::string message;  // why, when error != none
  std::vector<RecordError> record_errors;  // the records of the batch that made it fail, if any did (KIP-467)
  int64_t base_offset = -1;
  int64_t last_offset = -1;
  int64_t log_append_time = -1;  // -1 unless the topic uses LogAppendTime
  int64_t log_start_offset = -1;
  int64_t record_count = 0;
  // Every batch was an idempotent retry: nothing written, the offsets are the originals.
  bool duplicate = false;
};

struct ReadResult {
  ErrorCode error = ErrorCode::none;
  brokerd::protocol::Records records = brokerd::protocol::Records::empty();
  int64_t log_start_offset = -1;
  int64_t log_end_offset = -1;
  int64_t next_offset = -1;  // one past the last batch returned, -1 when none is
};

// A closed segment as the compaction cleaner sees it: copied on the owner thread, its file
// read elsewhere (closed segments are never written again, only replaced or deleted).
struct SegmentSnapshot {
  int64_t base_offset = 0;
  int64_t next_offset = 0;
  uint64_t size = 0;
  int64_t largest_timestamp = -1;
  std::shared_ptr<const FileHandle> file;
};

struct FlushTarget {
  std::vector<std::shared_ptr<const FileHandle>> files;  // to fdatasync
  int64_t offset = 0;                                    // everything below is durable after the sync
  // Then, when set, the leader-epoch file and the partition directory, opened by the sync.
  std::filesystem::path epochs_file;
  std::filesystem::path dir;
  // Non-zero with `dir`: the directory state the sync makes durable (pass it back to
  // mark_flushed).
  uint64_t dir_version = 0;
};

// Syncs a target's files in order (segments, leader-epoch file, directory), on any thread.
bool sync_flush_target(const FlushTarget& t);
// Targets synced by this process (flushes of a log's unsynced data), for /metrics.
uint64_t flush_targets_synced();

class Log {
 public:
  static constexpr const char* kCheckpointFile = "partition.checkpoint";
  static constexpr const char* kLeaderEpochFile = "leader-epoch-checkpoint";

  // Opens or creates the partition directory. After an unclean shutdown the segments past
  // the last recovery point are scanned and cut at the first invalid batch.
  // Throws std::system_error when the directory cannot be used.
  static std::unique_ptr<Log> open(std::filesystem::path dir, LogConfig cfg, bool clean_shutdown);
  ~Log();
  Log(const Log&) = delete;
  Log& operator=(const Log&) = delete;

  // Validates the batches, assigns offsets, leader epoch and (if configured) LogAppendTime in
  // place, and writes them with one write. Rolls first when the active segment is full.
  // Idempotent retries are answered with their original offsets and not written again.
  // `txn` says whether a client's transactional batches may open (or continue) transactions;
  // other origins' are allowed unless `txn` asks for a guard.
  AppendResult append(std::span<std::byte> batches, int32_t leader_epoch, int64_t now_ms,
                      AppendOrigin origin = AppendOrigin::client, TxnAppendMode txn = TxnAppendMode::not_allowed());

  // --- Transactions (log_txn.cc) ---
  // Writes one COMMIT or ABORT marker for `m`'s producer as a control batch at the log end.
  // Errors: PRODUCER_FENCED (epoch below the producer's), TRANSACTION_COORDINATOR_FENCED
  // (coordinator epoch below the last marker's), KAFKA_STORAGE_ERROR. A producer without an
  // ongoing transaction here gets the marker too; otherwise the marker ends its transaction,
  // and an ABORT adds the transaction to the segment's .txnindex.
  AppendResult append_marker(const TxnMarker& m, int32_t leader_epoch, int64_t now_ms);
  // The first offset of the oldest ongoing transaction (Kafka's first unstable offset).
  std::optional<int64_t> first_unstable_offset() const { return producers_.first_unstable_offset(); }
  // The aborted transactions a read_committed read of [from, upper) must be told of: those
  // whose marker is at or after `from` and whose first offset is below `upper`.
  std::vector<AbortedTxn> aborted_transactions(int64_t from, int64_t upper) const;

  // A follower's append: the leader's batches as the leader wrote them (offsets, leader
  // epochs and timestamps kept). They must continue this log exactly; their CRCs are
  // checked, the topic's size and key rules are not (the leader applied them).
  AppendResult append_replica(std::span<const std::byte> batches, int64_t now_ms);
  // A mirror leader's append: a source cluster's batches at their own offsets, timestamps
  // and producer fields, with this cluster's leader epoch written into each (it lies outside
  // the CRC), checked as append_replica checks. The bytes are changed in place.
  AppendResult append_mirrored(std::span<std::byte> batches, int32_t leader_epoch, int64_t now_ms);
  // Drops every segment and starts again, empty, at `offset` (a follower whose end is
  // below the leader's log start).
  void reset_to(int64_t offset, int64_t now_ms);

  // Whole batches from the one holding `offset`, at most max_bytes (the first batch whole
  // when min_one_batch), stopping before max_offset_exclusive.
  ReadResult read(int64_t offset, int32_t max_bytes, bool min_one_batch, int64_t max_offset_exclusive) const;

  int64_t log_start_offset() const { return log_start_offset_; }
  int64_t log_end_offset() const;
  uint64_t size_bytes() const;
  size_t segment_count() const { return segments_.size(); }
  int64_t recovery_point() const { return recovery_point_; }
  const std::filesystem::path& dir() const { return dir_; }
  const LogConfig& config() const { return cfg_; }

  struct TimestampAndOffset {
    int64_t timestamp = -1;
    int64_t offset = -1;
  };
  // The record with the largest timestamp (the first such record); nullopt when empty.
  std::optional<TimestampAndOffset> max_timestamp_and_offset() const;
  // The first record with timestamp >= ts, at or after log start.
  std::optional<TimestampAndOffset> offset_for_timestamp(int64_t ts) const;

  // Moves log start forward (DeleteRecords) and deletes segments wholly below it.
  ErrorCode delete_records_before(int64_t offset, int64_t now_ms = -1);
  // Applies retention.ms and retention.bytes to the segments wholly below `high_watermark`
  // (the partition's, as this replica knows it: a record above it may be the only copy of an
  // acknowledged write a new leader still needs); returns the number of segments deleted.
  size_t enforce_retention(int64_t now_ms, int64_t high_watermark);
  // Unlinks files whose file.delete.delay.ms has passed.
  void delete_expired_files(int64_t now_ms);

  // Starts a new active segment. Throws std::system_error, changing nothing, when its files
  // cannot be created.
  void roll(int64_t now_ms);
  // Makes everything written durable on this thread: the flush target synced at once, then
  // the indexes of what it covered (a clean close trusts them).
  ErrorCode flush();
  // Also takes the directory when segments were created since it was last synced.
  FlushTarget flush_target();
  // After every file of a target synced: moves the recovery point, and counts the directory
  // as durable up to the target's dir_version. A failed sync calls nothing, so the
  // directory is taken again by the next target.
  void mark_flushed(int64_t offset, uint64_t dir_version = 0);
  // True while a segment was created and its directory entry is not known to be durable.
  bool dir_dirty() const { return dir_synced_version_ < dir_version_; }
  // The directory and everything in it are durable (a syncfs() of the file system after a
  // crash recovery covered them).
  void mark_dir_synced();
  void close();
  void update_config(LogConfig cfg);
  // Removes everything at and above `offset` (whole batches; replication truncation). Below
  // the log start, the log is emptied and starts again at `offset`.
  void truncate_to(int64_t offset);

  // The descriptors of an idle partition (storage/file_budget.h): release_files() lets go of
  // every segment's file and index mappings; any later use opens what it needs again.
  void release_files();
  size_t files_held() const;
  // When this log was last used, on a node-wide clock of uses (larger is later).
  uint64_t last_used() const { return last_used_; }

  // The replica's leader-epoch cache as Kafka's leader-epoch-checkpoint text. It is kept here
  // and written (tmp + rename) only when records are about to become durable (a flush, which
  // syncs it before the directory) or a recovery point or log start is checkpointed: the
  // epochs of every record below a recovery point are durable with it. A change that is never
  // written can only concern epochs that start at the log end, which a restart drops anyway
  // (an idle partition's leadership changes cost no I/O). After a crash, the epochs of the
  // tail that recovery scanned are in recovered_epochs().
  void set_leader_epochs(std::string text);
  // Writes and syncs the text set now (epochs that recovery found in batch headers: a clean
  // stop that follows must not depend on a later flush). False when it could not.
  bool persist_leader_epochs();
  std::optional<std::string> read_leader_epochs() const;  // nullopt when there is no file
  // The start of each leader epoch among the batches load() recovered (empty after a clean stop).
  const std::vector<EpochStart>& recovered_epochs() const { return recovered_epochs_; }

  // Counts the truncations and resets: changes to records already written, which a copy of
  // the files made before must not take for appends (partitions/log_dir_move.h).
  uint64_t rewrites() const { return rewrites_; }

  // Segments in offset order, for tools and tests.
  std::vector<const Segment*> segments() const;

  // --- Compaction hooks (the cleaner is storage/cleaner.h) ---
  // The segments below the active one, in offset order.
  std::vector<SegmentSnapshot> closed_segments() const;
  // Swaps the cleaned files `<dir>/<stem of old.front()>.{log,index,timeindex}.cleaned` in
  // for the closed segments `old` (contiguous, unchanged since they were snapshot), crash-
  // safely: .cleaned -> .swap (the .log.swap rename commits), old files -> .deleted, .swap ->
  // final names; load() completes a swap a crash interrupted. Returns false, changing nothing,
  // when the log changed meanwhile. `crash_after_step` (tests only) stops after step 1 or 2.
  bool replace_segments(std::span<const SegmentSnapshot> old, int64_t now_ms, int crash_after_step = 0);

  // Idempotent-producer state (see producer_state.h).
  ProducerStateManager& producer_state() { return producers_; }
  const ProducerStateManager& producer_state() const { return producers_; }

 private:
  Log(std::filesystem::path dir, LogConfig cfg);
  void load(bool clean_shutdown);
  Segment& active() const { return *segments_.rbegin()->second; }
  bool should_roll(size_t incoming_bytes, int64_t first_max_ts, int64_t last_offset, int64_t now_ms) const;
  // roll() for an append: false, with KAFKA_STORAGE_ERROR in res, when it failed.
  bool roll_for_append(int64_t now_ms, AppendResult& res);
  // A failed append (a full disk, an I/O error): KAFKA_STORAGE_ERROR with `message`, logged
  // at the first failure and then at most every 10 s with the count since, so that a producer
  // or a follower retrying against a full disk does not flood the log.
  void write_failed(AppendResult& res, std::string message, int64_t now_ms);
  // An append succeeded: logs the end of a run of failures.
  void write_succeeded() {
    if (write_failures_ > 0) note_recovery();
  }
  void note_recovery();
  void delete_segment(std::map<int64_t, std::unique_ptr<Segment>>::iterator it, int64_t now_ms);
  void write_checkpoint();
  void read_checkpoint();
  bool epochs_unsynced() const { return epochs_version_ > dir_synced_version_; }
  // Writes the leader-epoch text set since the last write, if any (not synced).
  bool write_pending_epochs();
  // Syncs the leader-epoch file (if a write is unsynced) and then the directory.
  bool sync_epochs_and_dir();
  // Finishes segment swaps a crash interrupted (`<base>.log.swap` files among `names`, the
  // directory's entries); updates `bases`, sorted.
  void complete_interrupted_swaps(std::vector<int64_t>& bases, const std::vector<std::string>& names);
  int64_t now() const;
  void touch() const { last_used_ = next_use_tick(); }
  static uint64_t next_use_tick();
  void read_slices(int64_t offset, int32_t max_bytes, bool min_one_batch, int64_t max_offset_exclusive,
                   ReadResult& res) const;
  // Producer-state hooks: checks before a write, load at open (snapshot, then the log after it).
  // The duplicate decision is per batch: `dups[k]` holds the original offsets of batch k when
  // it is an idempotent retry, which is then skipped while the others are written.
  bool check_producers(std::span<std::byte> batches, const std::vector<BatchInfo>& infos, int64_t base,
                       int64_t append_time, ProducerAppend& staged,
                       std::vector<std::optional<ProducerBatch>>& dups, AppendResult& res) const;
  // From the newest snapshot at or below min(log end, rebuild_txn_index_from); the aborted
  // transactions of markers at or after rebuild_txn_index_from go to the .txnindex again.
  void load_producer_state(int64_t rebuild_txn_index_from = INT64_MAX);
  // A follower learns the producers and transactions of the batches it replicates (no checks:
  // the leader made them). Needs the whole batch.
  void note_replicated_producer(const RecordBatchView& v);
  // A marker found in the log (replicated or replayed): its effect on the producer state and,
  // with `index`, an aborted transaction's .txnindex entry.
  void note_marker(const TxnMarker& m, int64_t offset, int64_t timestamp, bool index);
  void index_aborted(const CompletedTxn& t);

  std::filesystem::path dir_;
  LogConfig cfg_;
  std::map<int64_t, std::unique_ptr<Segment>> segments_;
  int64_t log_start_offset_ = 0;
  int64_t recovery_point_ = 0;
  // (log start, recovery point) as partition.checkpoint holds them; {-1, -1} when unknown.
  std::pair<int64_t, int64_t> checkpointed_{-1, -1};
  bool closed_ = false;
  mutable uint64_t last_used_ = 0;
  // Bumped whenever a segment file is created; the directory is durable up to the synced one.
  uint64_t dir_version_ = 1;
  uint64_t rewrites_ = 0;
  uint64_t write_failures_ = 0;         // failed appends since the last success
  uint64_t failures_unreported_ = 0;    // of which not logged yet
  int64_t failure_reported_ms_ = 0;
  uint64_t dir_synced_version_ = 0;
  // The directory version of the last leader-epoch write (its rename is an entry change).
  uint64_t epochs_version_ = 0;
  std::optional<std::string> epochs_pending_;
  std::vector<EpochStart> recovered_epochs_;
  struct PendingDelete {
    std::vector<std::filesystem::path> files;
    int64_t deadline_ms;
  };
  std::vector<PendingDelete> pending_deletes_;
  ProducerStateManager producers_{dir_};
};

}  // namespace brokerd::storage
