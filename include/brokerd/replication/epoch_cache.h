#pragma once
// The leader-epoch cache of one replica: for each leader epoch, the first offset written in it
// (Kafka's leader-epoch-checkpoint). It answers which epoch an offset belongs to and where an
// epoch ended, which is how a returning replica finds the point where its log agrees with the
// leader's.
#include <optional>
#include <string>
#include <vector>

#include "brokerd/replication/types.h"

namespace brokerd::replication {

struct EpochEntry {
  Epoch epoch = kNoEpoch;
  Offset start_offset = kNoOffset;
  bool operator==(const EpochEntry&) const = default;
};

// What OffsetForLeaderEpoch answers: the largest epoch <= the one asked for, and the offset
// where it ended (the next epoch's start, or the log end for the latest epoch).
struct EpochEnd {
  Epoch epoch = kNoEpoch;
  Offset end_offset = kNoOffset;
  bool operator==(const EpochEnd&) const = default;
};

class LeaderEpochCache {
 public:
  LeaderEpochCache() = default;
  explicit LeaderEpochCache(std::vector<EpochEntry> entries);

  // Records that `epoch` starts at `start_offset` (a later start for the latest epoch is
  // ignored). Entries with an epoch at least as large, or starting at or after it, are dropped
  // first: the log no longer holds them.
  void assign(Epoch epoch, Offset start_offset);
  EpochEnd end_for(Epoch requested, Offset log_end) const;
  // The epoch of the batch at `offset`, kNoEpoch if the cache does not cover it.
  Epoch epoch_at(Offset offset) const;
  // The log was truncated to end at `end`: epochs that start at or after it are gone.
  void truncate_from_end(Offset end);
  // The log now starts at `start`: the epoch covering it starts there.
  void truncate_from_start(Offset start);
  void clear() { entries_.clear(); }

  std::optional<EpochEntry> latest() const;
  const std::vector<EpochEntry>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }

  // Kafka's leader-epoch-checkpoint text: "0\n<count>\n<epoch> <offset>\n...".
  std::string to_checkpoint() const;
  static std::optional<LeaderEpochCache> from_checkpoint(std::string_view text);

 private:
  std::vector<EpochEntry> entries_;  // ascending in epoch and in start offset
};

}  // namespace brokerd::replication
