#pragma once
// The raft log on the project's segment log (storage::Log): each entry is one record of a
// RecordBatch v2 whose partitionLeaderEpoch is the entry's epoch; consecutive entries of one
// epoch (and of one kind, control or not) share a batch. The storage log assigns the offsets;
// every append checks that they are the raft offsets.
//
// Beside the segments, the directory holds:
// - `raft-log-start`: the log start offset and the epoch just below it (the snapshot id the
//   log was last cut at), plus a flag marking a reset in progress;
// - `raft-truncate.pending`: while a truncation cuts a batch in two, the batch prefix to keep,
//   so that a crash between cutting the file and rewriting the prefix loses nothing.
// The leader-epoch cache (first offset of each epoch) is rebuilt from the batch headers at
// open, so it can never disagree with the log.
//
// Test builds can simulate a power loss (track_durable_end): `raft-durable-end` then holds
// the end offset the last real fsync made durable (written without a sync of its own: it
// stands for what the disk has, and survives the kill -9 that the simulation pairs it with),
// and when the file `raft-power-loss` is present at open, the log is cut back to that end
// (and the marker removed), as a machine that lost power would find it.
//
// Threading: one thread at a time; flush() fsyncs on the calling thread.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "brokerd/raft/persistence.h"

namespace brokerd::storage {
class Log;
}

namespace brokerd::raft {

struct DiskRaftLogOptions {
  int64_t segment_bytes = 64LL << 20;
  int32_t max_batch_bytes = 1 << 20;  // entries of one epoch are grouped up to this size
  int32_t max_entry_bytes = 8 << 20;  // a larger payload is refused
  // Test builds only (BROKERD_INJECT_BUGS); both false otherwise.
  bool track_durable_end = false;  // keep raft-durable-end and honour raft-power-loss
  bool skip_fsync = false;         // the injected bug: flush() claims a sync it never made
};

class DiskRaftLog final : public RaftLog {
 public:
  static constexpr const char* kStartFile = "raft-log-start";
  static constexpr const char* kPendingFile = "raft-truncate.pending";
  static constexpr const char* kDurableEndFile = "raft-durable-end";
  static constexpr const char* kPowerLossFile = "raft-power-loss";

  struct EpochStart {
    Epoch epoch = 0;
    Offset start_offset = 0;
    friend bool operator==(const EpochStart&, const EpochStart&) = default;
  };

  // Opens or creates the log in `dir`, cuts a torn tail, finishes an interrupted truncation
  // or reset, and rebuilds the epoch cache. Throws std::system_error / std::runtime_error.
  static std::unique_ptr<DiskRaftLog> open(std::filesystem::path dir, DiskRaftLogOptions options = {});
  ~DiskRaftLog() override;
  DiskRaftLog(const DiskRaftLog&) = delete;
  DiskRaftLog& operator=(const DiskRaftLog&) = delete;

  Offset start_offset() const override { return start_; }
  Offset end_offset() const override;
  Offset flushed_end_offset() const override;
  Epoch last_epoch() const override;
  std::optional<Epoch> epoch_at(Offset offset) const override;
  OffsetAndEpoch end_offset_for_epoch(Epoch epoch) const override;
  std::vector<Entry> read(Offset from, size_t max_entries) const override;
  // Throws std::logic_error on entries that do not continue the log, std::runtime_error when
  // the storage log refuses the write (the node must stop: it can no longer persist).
  void append(const std::vector<Entry>& entries) override;
  void truncate_to(Offset end) override;
  void truncate_prefix(OffsetAndEpoch snapshot_id) override;
  void reset(OffsetAndEpoch snapshot_id) override;
  void flush(Offset up_to) override;

  // Flushes and closes the files; the object is unusable afterwards.
  void close();
  const std::filesystem::path& dir() const { return dir_; }
  const std::vector<EpochStart>& epoch_cache() const { return epochs_; }
  const storage::Log& storage_log() const { return *log_; }
  // A simulated power loss at open (track_durable_end): the end before and after the cut.
  struct PowerLoss {
    Offset end_before = 0;
    Offset end_after = 0;
  };
  const std::optional<PowerLoss>& power_loss() const { return power_loss_; }

 private:
  DiskRaftLog(std::filesystem::path dir, DiskRaftLogOptions options);
  void load();
  void open_storage();
  void write_start_file(OffsetAndEpoch start, bool resetting);
  // Empties the directory but for the start file and makes the storage log begin at `start`.
  void wipe_to(Offset start);
  void rebuild_epoch_cache();
  void finish_pending_truncation();
  // Appends one batch of entries sharing an epoch and kind.
  void append_batch(const Entry* first, size_t count);
  std::vector<Entry> read_batches(Offset from, size_t max_entries, bool include_below_start) const;
  // track_durable_end: records that everything below `end` is on the disk (or, after a cut,
  // that nothing past it is).
  void note_durable_end(Offset end);
  // track_durable_end: a simulated power loss asked for at open.
  void lose_unsynced_tail();

  std::filesystem::path dir_;
  DiskRaftLogOptions options_;
  std::unique_ptr<storage::Log> log_;
  Offset start_ = 0;
  Epoch base_epoch_ = 0;
  std::vector<EpochStart> epochs_;
  Offset durable_end_ = -1;  // track_durable_end: as raft-durable-end says
  std::optional<PowerLoss> power_loss_;
};

}  // namespace brokerd::raft
