#pragma once
// Idempotent- and transactional-producer state of one partition: per producer id, its epoch,
// the sequence ranges and offsets of its last five batches, the first offset of its ongoing
// transaction here and the coordinator epoch of its last transaction marker. The append path
// checks every batch against it (duplicate, gap, stale epoch, transaction state) before
// anything is written; snapshots beside the segments (`<20-digit offset>.snapshot`) let a
// restart resume without rescanning the log. The producer state rules for transactions live
// in producer_txn.cc.
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
#include <utility>
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
  // The first offset of the producer's ongoing transaction in this partition, -1 when none.
  int64_t current_txn_first_offset = -1;
  // The coordinator epoch of the last transaction marker written for this producer, -1 before any.
  int32_t coordinator_epoch = -1;

  bool in_transaction() const { return current_txn_first_offset >= 0; }

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
  bool transactional = false;
};

// How an append treats transactional data batches (Kafka's transaction verification, KIP-890).
struct TxnAppendMode {
  enum class Kind : uint8_t {
    not_allowed,  // INVALID_TXN_STATE: the batch is not part of an ongoing transaction
    unverified,   // transaction.partition.verification.enable=false: any may open a transaction
    guarded,      // a batch may open a transaction only under the producer's current guard
  };
  Kind kind = Kind::not_allowed;
  uint64_t guard = 0;

  static TxnAppendMode not_allowed() { return {}; }
  static TxnAppendMode unverified() { return {Kind::unverified, 0}; }
  static TxnAppendMode verified(uint64_t guard) { return {Kind::guarded, guard}; }
};

// The two kinds of transaction marker (the control record's type).
enum class ControlType : int16_t { abort = 0, commit = 1 };

// A transaction that a marker ended: its producer, its first offset and the marker's offset.
struct CompletedTxn {
  int64_t producer_id = kNoProducerId;
  int64_t first_offset = -1;
  int64_t last_offset = -1;  // the marker's
  bool aborted = false;
};

// A verification in flight for a producer (memory only): the guard the coordinator's answer
// must come back with for a batch to open a transaction.
struct VerificationEntry {
  uint64_t guard = 0;
  int16_t epoch = kNoProducerEpoch;
  int32_t lowest_sequence = kNoSequence;
};

class ProducerStateManager;

// The checks of one append (one or more batches), staged until the write succeeds.
class ProducerAppend {
 public:
  explicit ProducerAppend(const ProducerStateManager& state, TxnAppendMode mode = TxnAppendMode::unverified())
      : state_(state), mode_(mode) {}

  // Checks one batch that is about to get offsets [b.first_offset, b.last_offset]. Returns
  // none when it may be written (or when it was written before: see duplicate()), else
  // OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_PRODUCER_EPOCH or INVALID_TXN_STATE with a message.
  protocol::ErrorCode add(const ProducerBatchHeader& h, const ProducerBatch& b, std::string* message);
  // The original batch when the last add() met a batch already in the log.
  const std::optional<ProducerBatch>& duplicate() const { return duplicate_; }
  bool empty() const { return updated_.empty(); }
  // Applies the staged batches (after the write succeeded). A producer whose transaction
  // they opened needs its verification no more: it is cleared.
  void commit(ProducerStateManager& state);

 private:
  const ProducerEntry* current(int64_t pid) const;
  // The transaction rules for a batch past the sequence checks (producer_txn.cc).
  protocol::ErrorCode check_txn(const ProducerEntry* cur, const ProducerBatchHeader& h, std::string* message) const;

  const ProducerStateManager& state_;
  TxnAppendMode mode_;
  std::vector<ProducerEntry> updated_;  // usually one: one batch per partition per request
  std::vector<int64_t> opened_;         // producers whose transaction these batches open
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
    ongoing_.clear();
    verifications_.clear();
    snapshot_matches_ = -1;
  }

  // --- Transactions (producer_txn.cc) ---
  // Checks a marker for (pid, epoch, coordinator_epoch): PRODUCER_FENCED when the epoch is
  // below the producer's, TRANSACTION_COORDINATOR_FENCED when the coordinator epoch is below
  // the last marker's; none otherwise (also for a producer without an ongoing transaction).
  protocol::ErrorCode check_marker(int64_t pid, int16_t epoch, int32_t coordinator_epoch, std::string* message) const;
  // Records a marker at `offset` (no checks): ends the producer's ongoing transaction, if
  // any, and returns it; clears the producer's verification.
  std::optional<CompletedTxn> apply_marker(int64_t pid, int16_t epoch, int32_t coordinator_epoch, ControlType type,
                                           int64_t offset, int64_t timestamp);
  // The smallest first offset of the ongoing transactions (Kafka's first unstable offset).
  std::optional<int64_t> first_unstable_offset() const;
  // The last stable offset to record with an aborted transaction: the first offset of the
  // ongoing transactions of other producers, else one past the marker.
  int64_t last_stable_offset_after(const CompletedTxn& txn) const;
  // Starts (or continues) a verification for the producer; returns its non-zero guard.
  uint64_t start_verification(int64_t pid, int16_t epoch, int32_t base_sequence);
  const VerificationEntry* verification(int64_t pid) const;
  void clear_verification(int64_t pid) { verifications_.erase(pid); }

  // Forgets producers whose last batch is older than expiration_ms, except those with an
  // ongoing transaction. Returns how many.
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
  // (first offset, producer id) of every ongoing transaction, kept with producers_.
  std::set<std::pair<int64_t, int64_t>> ongoing_;
  std::unordered_map<int64_t, VerificationEntry> verifications_;
  uint64_t next_guard_ = 1;
  int64_t last_expiry_ms_ = 0;
};

// Snapshot encoding (exposed for tests): version, CRC-32C, then the entries. Version 2 adds
// each entry's ongoing transaction and coordinator epoch; version 1 still decodes.
std::vector<std::byte> encode_producer_snapshot(const std::unordered_map<int64_t, ProducerEntry>& producers,
                                                uint16_t version = 2);
std::optional<std::vector<ProducerEntry>> decode_producer_snapshot(std::span<const std::byte> bytes);

}  // namespace brokerd::storage
