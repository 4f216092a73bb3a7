#pragma once
// A ReplicaLog that keeps only each batch's offsets and epoch, for the core's unit tests.
#include <algorithm>
#include <vector>

#include "brokerd/replication/replica.h"

namespace brokerd::replication::testing {

struct MemoryLog final : ReplicaLog {
  struct Stored {
    Offset base;
    Offset last;
    Epoch epoch;
  };
  Offset start = 0;
  std::vector<Stored> batches;

  Offset start_offset() const override { return start; }
  Offset end_offset() const override { return batches.empty() ? start : batches.back().last + 1; }
  bool append_replica(const Batch& b) override {
    if (fail_appends) return false;
    batches.push_back({b.base_offset, b.last_offset, b.leader_epoch});
    return true;
  }
  bool fail_appends = false;  // a full disk
  void truncate_to(Offset end) override {
    while (!batches.empty() && batches.back().base >= end) batches.pop_back();
    if (!batches.empty() && batches.back().last >= end) batches.back().last = end - 1;
  }
  void reset_to(Offset s) override {
    batches.clear();
    start = s;
  }
  void advance_start(Offset s) override {
    s = std::min(s, end_offset());
    while (!batches.empty() && batches.front().last < s) batches.erase(batches.begin());
    if (!batches.empty() && batches.front().base < s) batches.front().base = s;
    start = std::max(start, s);
  }
  // The leader's own append: `count` records in `epoch`; returns the last offset.
  Offset write(Epoch epoch, int count = 1) {
    const Offset base = end_offset();
    batches.push_back({base, base + count - 1, epoch});
    return base + count - 1;
  }
};

inline PartitionState partition(BrokerId leader, Epoch leader_epoch, std::vector<BrokerId> isr,
                                std::vector<BrokerId> replicas = {1, 2, 3}, Epoch partition_epoch = 0) {
  PartitionState s;
  s.leader = leader;
  s.leader_epoch = leader_epoch;
  s.partition_epoch = partition_epoch;
  s.replicas = std::move(replicas);
  s.isr = std::move(isr);
  return s;
}

}  // namespace brokerd::replication::testing
