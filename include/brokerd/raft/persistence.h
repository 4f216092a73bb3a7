#pragma once
// What the core needs from durable storage. The caller owns the objects and performs the slow
// part (fsync) when the core asks for it; only data reported as flushed survives a crash.
#include <optional>
#include <string>
#include <vector>

#include "brokerd/raft/types.h"

namespace brokerd::raft {

// The replicated log. Appends are volatile until flush(); truncations take effect at once.
// A storage-backed implementation maps start/end offsets, the epoch index (the leader-epoch
// checkpoint) and flush onto the segment log.
class RaftLog {
 public:
  virtual ~RaftLog() = default;
  // First offset held; equals the end offset of the latest snapshot, or 0.
  virtual Offset start_offset() const = 0;
  // One past the last entry.
  virtual Offset end_offset() const = 0;
  // End of the prefix that has been flushed (fsynced).
  virtual Offset flushed_end_offset() const = 0;
  // Epoch of the last entry; the snapshot's epoch when the log holds no entries.
  virtual Epoch last_epoch() const = 0;
  // Epoch of the entry at `offset`; at start_offset()-1 answers the snapshot's epoch.
  virtual std::optional<Epoch> epoch_at(Offset offset) const = 0;
  // The largest epoch <= `epoch` in the log and the offset where it ends (the start of the
  // next epoch, or the log end). {-1,-1} if `epoch` is older than the log start.
  virtual OffsetAndEpoch end_offset_for_epoch(Epoch epoch) const = 0;
  virtual std::vector<Entry> read(Offset from, size_t max_entries) const = 0;
  // Entries must continue the log: the first offset equals end_offset().
  virtual void append(const std::vector<Entry>& entries) = 0;
  // Drops entries at and after `end`.
  virtual void truncate_to(Offset end) = 0;
  // Drops entries before the snapshot end offset, which becomes the log start.
  virtual void truncate_prefix(OffsetAndEpoch snapshot_id) = 0;
  // Drops everything and restarts the log after `snapshot_id` (a snapshot was installed).
  virtual void reset(OffsetAndEpoch snapshot_id) = 0;
  // Makes entries below min(up_to, end_offset()) durable.
  virtual void flush(Offset up_to) = 0;
};

// The quorum-state file (QuorumStateData): written atomically and durably before write()
// returns, so a vote is never forgotten.
struct QuorumStateData {
  Epoch epoch = 0;
  ReplicaId voted_for = kNoReplica;
  ReplicaId leader_id = kNoReplica;
  friend bool operator==(const QuorumStateData&, const QuorumStateData&) = default;
};

class QuorumStateStore {
 public:
  virtual ~QuorumStateStore() = default;
  virtual std::optional<QuorumStateData> read() const = 0;
  virtual void write(const QuorumStateData& state) = 0;
};

// A snapshot of the state machine at `id.offset` (exclusive), whose last entry has `id.epoch`.
struct Snapshot {
  OffsetAndEpoch id;
  std::string data;
};

// Snapshots are saved durably before save() returns (write, fsync, rename in a real store).
class SnapshotStore {
 public:
  virtual ~SnapshotStore() = default;
  virtual std::optional<Snapshot> latest() const = 0;
  virtual void save(const Snapshot& snapshot) = 0;
};

}  // namespace brokerd::raft
