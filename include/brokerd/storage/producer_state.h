#pragma once
// Idempotent-producer state of one partition: per producer id, its epoch and the sequence
// ranges and offsets of its last five batches. The append path checks every batch against
// it (duplicate, gap, stale epoch) before anything is written; snapshots beside the
// segments (`<20-digit offset>.snapshot`) let a restart resume without rescanning the log.
//
// Threading: owned by a Log, used on its partition's home thread only.
#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "brokerd/protocol/error_code.h"

namespace brokerd::storage {

constexpr int64_t kNoProducerId = -1;
constexpr int16_t kNoProducerEpoch = -1;
constexpr int32_t kNoSequence = -1;
// Kafka keeps this many batches per producer; clients keep at most five requests in flight.
constexpr size_t kRetainedProducerBatches = 5;

// seq + delta, wrapping past INT32_MAX to 0 as producers do.
int32_t increment_sequence(int32_t seq, int32_t delta);
// seq - delta, wrapping below 0 to INT32_MAX.
int32_t decrement_sequence(int32_t seq, int32_t delta);
// Whether `next` is the sequence right after `last` (INT32_MAX is followed by 0).
bool in_sequence(int32_t last, int32_t next);

struct ProducerBatch {
  int32_t first_seq = kNoSequence;
  int32_t last_seq = kNoSequence;
  int64_t first_offset = -1;
  int64_t last_offset = -1;
  int64_t timestamp = -1;  // the batch's max timestamp as stored
  bool operator==(const ProducerBatch&) const = default;
};

struct ProducerEntry {
  int64_t producer_id = kNoProducerId;
  int16_t epoch = kNoProducerEpoch;
  int64_t last_timestamp = -1;
  // Oldest first; at most kRetainedProducerBatches, all of `epoch`.
  std::vector<ProducerBatch> batches;

  int32_t last_seq() const { return batches.empty() ? kNoSequence : batches.back().last_seq; }
  int64_t last_offset() const { return batches.empty() ? -1 : batches.back().last_offset; }
  const ProducerBatch* find(int32_t first_seq, int32_t last_seq) const;
  void add(int16_t epoch, const ProducerBatch& b);
  bool operator==(const ProducerEntry&) const = default;
};

// The header fields of one data batch that the producer rules look at.
struct ProducerBatchHeader {
  int64_t producer_id = kNoProducerId;
  int16_t epoch = kNoProducerEpoch;
  int32_t first_seq = kNoSequence;
  int32_t last_seq = kNoSequence;
};

class ProducerStateManager;

// The checks of one append (one or more batches), staged until the write succeeds.
class ProducerAppend {
 public:
  explicit ProducerAppend(const ProducerStateManager& state) : state_(state) {}

  // Checks one batch that is about to get offsets [b.first_offset, b.last_offset]. Returns
  // none when it may be written (or when it was written before: see duplicate()), else
  // OUT_OF_ORDER_SEQUENCE_NUMBER or INVALID_PRODUCER_EPOCH with a message.
  protocol::ErrorCode add(const ProducerBatchHeader& h, const ProducerBatch& b, std::string* message);
  // The original batch when the last add() met a batch already in the log.
  const std::optional<ProducerBatch>& duplicate() const { return duplicate_; }
  bool empty() const { return updated_.empty(); }
  // Applies the staged batches (after the write succeeded).
  void commit(ProducerStateManager& state);

 private:
  const ProducerEntry* current(int64_t pid) const;

  const ProducerStateManager& state_;
  std::vector<ProducerEntry> updated_;  // usually one: one batch per partition per request
  std::optional<ProducerBatch> duplicate_;
};

class ProducerStateManager {
 public:
  static constexpr const char* kSnapshotSuffix = ".snapshot";

  explicit ProducerStateManager(std::filesystem::path dir) : dir_(std::move(dir)) {}

  const ProducerEntry* find(int64_t pid) const;
  const std::unordered_map<int64_t, ProducerEntry>& producers() const { return producers_; }
  // Records a batch already in the log (no checks): used by appends and by rebuilds.
  void update(const ProducerBatchHeader& h, const ProducerBatch& b);
  void put(ProducerEntry e);
  void clear() {
    producers_.clear();
    snapshot_matches_ = -1;
  }

  // Forgets producers whose last batch is older than expiration_ms. Returns how many.
  size_t expire(int64_t now_ms, int64_t expiration_ms);
  // Expires at most once per check_interval_ms.
  void maybe_expire(int64_t now_ms, int64_t expiration_ms, int64_t check_interval_ms);

  // Writes `<offset>.snapshot`: the state of the log below `offset`. With sync, fsyncs it.
  bool write_snapshot(int64_t offset, bool sync);
  // Replaces the state with the newest readable snapshot at or below max_offset; returns
  // its offset, or nullopt (state left empty) when there is none.
  std::optional<int64_t> load_snapshot(int64_t max_offset);
  // Offsets of the snapshot files present, ascending.
  std::vector<int64_t> snapshot_offsets() const;
  // The snapshot files among `names` (a listing of the directory): known from then on
  // without listing it again, since only this class writes and deletes them. Until then the
  // directory is listed at first need.
  void set_snapshot_files(const std::vector<std::string>& names);
  // Deletes snapshots above `offset` (after truncation).
  void delete_snapshots_after(int64_t offset);
  // Deletes snapshots below `offset`, always keeping the newest one.
  void delete_snapshots_before(int64_t offset);

  std::filesystem::path snapshot_path(int64_t offset) const;
  // Whether the snapshot file at `offset` holds exactly the current state (written or loaded
  // since the last change), so that a clean close need not write it again.
  bool snapshot_matches(int64_t offset) const { return snapshot_matches_ == offset; }

 private:
  std::set<int64_t>& files() const;

  std::filesystem::path dir_;
  int64_t snapshot_matches_ = -1;
  mutable std::optional<std::set<int64_t>> files_;
  std::unordered_map<int64_t, ProducerEntry> producers_;
  int64_t last_expiry_ms_ = 0;
};

// Snapshot encoding (exposed for tests): version, CRC-32C, then the entries.
std::vector<std::byte> encode_producer_snapshot(const std::unordered_map<int64_t, ProducerEntry>& producers);
std::optional<std::vector<ProducerEntry>> decode_producer_snapshot(std::span<const std::byte> bytes);

}  // namespace brokerd::storage
