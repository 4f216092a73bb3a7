#pragma once
// The transaction coordinator's rules, as pure functions over one transactional id's metadata
// and the time. A rule answers with an error, or with the transition to write to
// __transaction_state and what to do once it is written; the caller owns the cache, the log
// and the sockets:
//
//   decision = rule(...)                    // an error: answer it, nothing changes
//   begin_transition(md, *decision.write)   // other requests now get CONCURRENT_TRANSACTIONS
//   ... write txn_record(id, *decision.write) and wait for it to replicate ...
//   complete_transition(md, *decision.write)      // or abandon_transition() if the write failed
//   then: reply / markers_after_prepare() / send markers, then write plan.complete
//
// Files: transitions.cc (begin/complete), init_producer_id.cc, add_partitions.cc (with
// AddOffsetsToTxn and the verify-only check), end_txn.cc (with the markers that follow),
// timeouts.cc (timed-out transactions, expiration, loading).
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "brokerd/protocol/error_code.h"
#include "brokerd/transactions/txn_log.h"
#include "brokerd/transactions/types.h"

namespace brokerd::transactions {

using protocol::ErrorCode;

// ---- Decisions --------------------------------------------------------------------------

// What to do once the written transition has replicated.
enum class AfterWrite : uint8_t {
  reply,             // answer the client with the written producer id and epoch
  send_markers,      // markers_after_prepare(), send the plan's markers, answer with plan.reply
  fence_then_retry,  // as send_markers, but answer CONCURRENT_TRANSACTIONS: the client retries
};

struct Decision {
  ErrorCode error = ErrorCode::none;  // with no write: the answer
  std::optional<TxnValue> write;      // the transition to write, then `then`
  AfterWrite then = AfterWrite::reply;
  // With neither error nor write: the producer id and epoch to answer with (a retry whose
  // outcome is already written).
  ProducerIdAndEpoch reply;
  // InitProducerId for an id not yet known: the entry (Empty, no epoch) to add to the cache
  // before `write` is begun on it.
  std::optional<TxnMetadata> created;
  // The write bumps the epoch to fence the current producer; if it fails, abandon_transition
  // remembers it so the next fence does not bump again.
  bool epoch_fence = false;

  static Decision fail(ErrorCode e) {
    Decision d;
    d.error = e;
    return d;
  }
  static Decision write_then(TxnValue v, AfterWrite then) {
    Decision d;
    d.write = std::move(v);
    d.then = then;
    return d;
  }
  static Decision answer(ProducerIdAndEpoch reply) {
    Decision d;
    d.reply = reply;
    return d;
  }
  bool writes() const { return write.has_value(); }
};

// The markers that end a prepared transaction, and what to write once all are written.
struct MarkerPlan {
  std::string transactional_id;
  TxnResult result = TxnResult::abort;
  ProducerId producer_id = kNoProducerId;
  ProducerEpoch producer_epoch = kNoProducerEpoch;
  std::vector<TopicPartition> partitions;
  TxnValue complete;         // CompleteCommit or CompleteAbort
  ProducerIdAndEpoch reply;  // what EndTxn answers: the id and epoch the producer goes on with
};

struct MarkerDecision {
  ErrorCode error = ErrorCode::none;
  std::optional<MarkerPlan> plan;
};

// A new producer id from the cluster's blocks, or the error that kept one from being had.
struct ProducerIdGrant {
  ErrorCode error = ErrorCode::none;
  ProducerId producer_id = kNoProducerId;
};
using AllocateProducerId = std::function<ProducerIdGrant()>;

// ---- Transitions (transitions.cc) ---------------------------------------------------------

// Marks `next` as being written. The caller checked the rule's decision: no transition is
// pending on `md`.
void begin_transition(TxnMetadata& md, const TxnValue& next);
// Applies a written transition. False (and `md` unchanged) when `next` is not the pending
// transition or does not follow from `md`: the state table, the producer id and epoch (the
// same, one more, or a new id at epoch 0) and the partitions each state allows.
[[nodiscard]] bool complete_transition(TxnMetadata& md, const TxnValue& next);
// The write of `attempted` failed (or its outcome is unknown): the pending mark goes. A failed
// epoch fence still fences in memory, since its write may yet be in the log: the old epoch
// must not write again, and the next fence reuses the bumped epoch instead of bumping twice.
void abandon_transition(TxnMetadata& md, const TxnValue& attempted, bool epoch_fence);

// ---- InitProducerId (init_producer_id.cc) -----------------------------------------------

struct InitProducerIdRequest {
  std::string transactional_id;
  int32_t timeout_ms = 0;
  // KIP-360: the id and epoch the producer had, when it re-initialises after an error.
  std::optional<ProducerIdAndEpoch> expected;
};

// `existing` is the cached metadata, null for an id the coordinator has never seen.
Decision init_producer_id(const TxnMetadata* existing, const InitProducerIdRequest& req, int64_t now_ms,
                          const CoordinatorConfig& config, const AllocateProducerId& allocate);
bool valid_timeout(int32_t timeout_ms, const CoordinatorConfig& config);

// ---- AddPartitionsToTxn and AddOffsetsToTxn (add_partitions.cc) ----------------------------

struct AddPartitionsRequest {
  std::string transactional_id;
  ProducerId producer_id = kNoProducerId;
  ProducerEpoch producer_epoch = kNoProducerEpoch;
  std::vector<TopicPartition> partitions;
  int16_t client_txn_version = kTxnVersion0;
};

Decision add_partitions(const TxnMetadata* md, const AddPartitionsRequest& req, int64_t now_ms);
// AddOffsetsToTxn: the group's partition of __consumer_offsets joins the transaction.
Decision add_offsets(const TxnMetadata* md, const std::string& transactional_id, ProducerId producer_id,
                     ProducerEpoch producer_epoch, int32_t offsets_partition, int64_t now_ms,
                     int16_t client_txn_version = kTxnVersion0);

// KIP-890 part 1: a partition leader asks, before appending a transactional batch, whether its
// partition is in this producer's ongoing transaction. Each partition gets none or
// TRANSACTION_ABORTABLE, or all get the request's error.
std::vector<std::pair<TopicPartition, ErrorCode>> verify_partitions(const TxnMetadata* md,
                                                                    const AddPartitionsRequest& req);

// ---- EndTxn and the markers (end_txn.cc) ------------------------------------------------

struct EndTxnRequest {
  std::string transactional_id;
  ProducerId producer_id = kNoProducerId;
  ProducerEpoch producer_epoch = kNoProducerEpoch;
  TxnResult result = TxnResult::commit;
  int16_t client_txn_version = kTxnVersion0;  // 2 for EndTxn v5 and later
};

Decision end_txn(const TxnMetadata* md, const EndTxnRequest& req, int64_t now_ms, const AllocateProducerId& allocate);

// After a PrepareCommit/PrepareAbort (`written`) is in the log and applied to `md`: the
// markers to send and the completion to write once they are. An error when `md` moved on
// meanwhile.
MarkerDecision markers_after_prepare(const TxnMetadata& md, const TxnValue& written, int64_t now_ms);
// The CompleteCommit/CompleteAbort that follows a prepared `md`; with version 2 a transaction
// that used up its producer id's epochs moves to next_producer_id at epoch 0.
TxnValue prepare_complete(const TxnMetadata& md, int64_t now_ms);

// The abort that fences the current producer of an ongoing transaction: PrepareAbort with the
// epoch bumped (unless a previous fence failed to write) and no last epoch, so the fenced
// producer cannot pass a KIP-360 retry check.
TxnValue fence_and_abort(const TxnMetadata& md, int64_t now_ms);

// Clients before the PRODUCER_FENCED code (InitProducerId < v4, AddPartitionsToTxn and
// AddOffsetsToTxn < v2, EndTxn < v2) get INVALID_PRODUCER_EPOCH instead.
ErrorCode fenced_error_for(ErrorCode e, bool client_knows_producer_fenced);

// ---- Timeouts, expiration, loading (timeouts.cc) -------------------------------------------

// An ongoing transaction older than its timeout, with no transition pending.
bool timed_out(const TxnMetadata& md, int64_t now_ms);
std::vector<ProducerIdAndEpoch> timed_out_transactions(const std::map<std::string, TxnMetadata>& cache, int64_t now_ms);
// Aborts a timed-out transaction, fencing its producer; `expected` is the producer id found
// when the time-out was noticed (the id may have moved on since).
Decision abort_timed_out(const TxnMetadata& md, ProducerId expected, int64_t now_ms);

// An id with no transaction under way, untouched for transactional.id.expiration.ms.
bool should_expire(const TxnMetadata& md, int64_t now_ms, const CoordinatorConfig& config);
// The Dead transition to begin while txn_tombstone(id) is written; once it is, the id leaves
// the cache. nullopt when the id may not expire.
std::optional<TxnValue> expire(const TxnMetadata& md, int64_t now_ms, const CoordinatorConfig& config);

// One partition of __transaction_state replayed in log order: the last value of each id, a
// tombstone removing it; records of an unknown key version are skipped.
std::map<std::string, TxnMetadata> replay_txn_log(std::span<const TxnLogRecord> records);
// A coordinator that loads a partition finishes what its predecessor prepared: each
// PrepareCommit/PrepareAbort id gets its markers re-sent. Begin each plan's completion on the
// cache entry before sending.
std::vector<MarkerPlan> resume_after_load(const std::map<std::string, TxnMetadata>& loaded, int64_t now_ms);

}  // namespace brokerd::transactions
