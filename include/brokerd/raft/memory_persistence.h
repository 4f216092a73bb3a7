#pragma once
// In-memory persistence with a simulated fsync: crash() throws away whatever was not flushed.
// Used by the simulator and the unit tests; the storage-backed log is disk_log.h.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "brokerd/raft/persistence.h"

namespace brokerd::raft {

// A running hash over a log prefix: equal chains at an offset mean equal prefixes, which is
// how the simulator checks log matching in O(1) per entry.
uint64_t chain_hash(uint64_t previous, const Entry& entry);

class MemoryRaftLog final : public RaftLog {
 public:
  // Called for each appended entry with the prefix chain ending at it.
  using AppendHook = std::function<void(const Entry&, uint64_t chain)>;

  Offset start_offset() const override { return start_; }
  Offset end_offset() const override { return start_ + static_cast<Offset>(entries_.size()); }
  Offset flushed_end_offset() const override { return flushed_end_; }
  Epoch last_epoch() const override;
  std::optional<Epoch> epoch_at(Offset offset) const override;
  OffsetAndEpoch end_offset_for_epoch(Epoch epoch) const override;
  std::vector<Entry> read(Offset from, size_t max_entries) const override;
  void append(const std::vector<Entry>& entries) override;
  void truncate_to(Offset end) override;
  void truncate_prefix(OffsetAndEpoch snapshot_id) override;
  void reset(OffsetAndEpoch snapshot_id) override;
  void flush(Offset up_to) override;

  // Simulated power loss: unflushed entries vanish.
  void crash();
  // Chain at `offset` (start_offset()-1 gives the base chain); nullopt outside the log.
  std::optional<uint64_t> chain_at(Offset offset) const;
  // The chain of the prefix below the log start, known to whoever installed the snapshot.
  void set_base_chain(uint64_t chain) { base_chain_ = chain; }
  void set_append_hook(AppendHook hook) { hook_ = std::move(hook); }
  const Entry* entry_at(Offset offset) const;

 private:
  struct Stored {
    Entry entry;
    uint64_t chain;
  };
  Offset start_ = 0;
  Epoch base_epoch_ = 0;
  uint64_t base_chain_ = 0;
  Offset flushed_end_ = 0;
  std::vector<Stored> entries_;
  AppendHook hook_;
};

class MemoryQuorumStateStore final : public QuorumStateStore {
 public:
  std::optional<QuorumStateData> read() const override { return state_; }
  void write(const QuorumStateData& state) override {
    state_ = state;
    ++writes_;
  }
  int writes() const { return writes_; }

 private:
  std::optional<QuorumStateData> state_;
  int writes_ = 0;
};

class MemorySnapshotStore final : public SnapshotStore {
 public:
  std::optional<Snapshot> latest() const override { return latest_; }
  void save(const Snapshot& snapshot) override {
    if (!latest_ || latest_->id.offset < snapshot.id.offset) latest_ = snapshot;
  }

 private:
  std::optional<Snapshot> latest_;
};

}  // namespace brokerd::raft
