#pragma once
// A partition log in memory with a flushed prefix: what a crash keeps is what was flushed.
#include <cstdint>
#include <vector>

#include "brokerd/replication/replica.h"

namespace brokerd::replication::sim {

struct Record {
  int32_t producer = 0;
  int32_t sequence = 0;
  int64_t value = 0;  // unique per write
  bool operator==(const Record&) const = default;
};

struct StoredBatch {
  Offset base = 0;
  Epoch epoch = 0;
  std::vector<Record> records;
  Offset last() const { return base + static_cast<Offset>(records.size()) - 1; }
};

// One entry as the checker compares them across replicas.
struct Entry {
  Epoch epoch = 0;
  Record record;
  bool operator==(const Entry&) const = default;
};

class SimLog final : public ReplicaLog {
 public:
  Offset start_offset() const override { return start_; }
  Offset end_offset() const override { return batches_.empty() ? start_ : batches_.back().last() + 1; }
  bool append_replica(const Batch& batch) override;
  void truncate_to(Offset end) override;
  void reset_to(Offset start) override;
  void advance_start(Offset start) override;

  // The leader writes a batch of one record in its epoch; returns its offset.
  Offset append_leader(Epoch epoch, const Record& r);
  // The offset holding this producer's sequence, or -1.
  Offset find(int32_t producer, int32_t sequence) const;
  const Entry* entry_at(Offset offset) const;
  // Batches from `offset` (at most `max_batches`), encoded as the wire would carry them.
  std::vector<std::pair<StoredBatch, std::vector<std::byte>>> read(Offset offset, int max_batches) const;

  void flush() { flushed_end_ = end_offset(); }
  // A crash: everything past the flushed prefix is gone.
  void crash();
  // The lowest end this log had since the checker last looked (truncations and crashes).
  Offset take_low_water();

  static std::vector<std::byte> encode(const StoredBatch& b);
  static StoredBatch decode(const Batch& b);

 private:
  Offset start_ = 0;
  Offset flushed_end_ = 0;
  Offset low_water_ = INT64_MAX;
  std::vector<StoredBatch> batches_;
  mutable Entry scratch_;
};

}  // namespace brokerd::replication::sim
