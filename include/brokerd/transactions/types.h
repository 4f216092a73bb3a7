#pragma once
// The vocabulary of the transaction coordinator: producer ids and epochs, the states of a
// transactional id (with Kafka's ids, which the __transaction_state log stores), and the
// metadata the coordinator keeps for each transactional id.
#include <compare>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>

namespace brokerd::transactions {

using ProducerId = int64_t;
using ProducerEpoch = int16_t;

inline constexpr ProducerId kNoProducerId = -1;
inline constexpr ProducerEpoch kNoProducerEpoch = -1;
inline constexpr ProducerEpoch kMaxProducerEpoch = std::numeric_limits<int16_t>::max();

// A client may not use the last epoch: the coordinator keeps it to fence a producer whose epoch
// is one below, so an epoch at Short.MaxValue - 1 means "allocate a new producer id next".
constexpr bool epoch_exhausted(ProducerEpoch e) { return e >= kMaxProducerEpoch - 1; }

// The transaction.version feature levels (KIP-890). Level 1 writes flexible log values; level 2
// bumps the producer epoch at the end of every transaction. Kafka stores the client's level
// with each transition: EndTxn v5 and later is a level 2 client, older ones are level 0.
inline constexpr int16_t kTxnVersion0 = 0;
inline constexpr int16_t kTxnVersion1 = 1;
inline constexpr int16_t kTxnVersion2 = 2;
constexpr bool supports_epoch_bump(int16_t txn_version) { return txn_version >= kTxnVersion2; }
// The TransactionLogValue version a coordinator at this feature level writes.
constexpr int16_t log_value_version(int16_t txn_version) { return txn_version >= kTxnVersion1 ? 1 : 0; }

// The partition of a topic named in a transaction. Local to this module so the core does not
// depend on the partitions layer.
struct TopicPartition {
  std::string topic;
  int32_t partition = 0;
  auto operator<=>(const TopicPartition&) const = default;
};

// Kafka's ids and names; the id is what TransactionLogValue.TransactionStatus holds.
enum class TxnState : int8_t {
  empty = 0,
  ongoing = 1,
  prepare_commit = 2,
  prepare_abort = 3,
  complete_commit = 4,
  complete_abort = 5,
  dead = 6,
  prepare_epoch_fence = 7,
};

// How a transaction ends; the values are the control record types of the markers
// (ABORT 0, COMMIT 1).
enum class TxnResult : int8_t { abort = 0, commit = 1 };

struct ProducerIdAndEpoch {
  ProducerId producer_id = kNoProducerId;
  ProducerEpoch epoch = kNoProducerEpoch;
  bool operator==(const ProducerIdAndEpoch&) const = default;
};

// What one transition sets: the durable fields of a transactional id, as the coordinator writes
// them to __transaction_state (Kafka's TxnTransitMetadata). last_producer_epoch is kept in
// memory only (the log has no field for it; a loaded id starts with none).
struct TxnValue {
  ProducerId producer_id = kNoProducerId;
  // The producer id before the last rotation, so a retried InitProducerId that missed the
  // rotation's answer is recognised.
  ProducerId previous_producer_id = kNoProducerId;
  // Version 2 only: the producer id the transaction moves to once its markers are written,
  // when ending it used up the epochs of the current one.
  ProducerId next_producer_id = kNoProducerId;
  ProducerEpoch producer_epoch = kNoProducerEpoch;
  ProducerEpoch last_producer_epoch = kNoProducerEpoch;
  int32_t timeout_ms = 0;
  TxnState state = TxnState::empty;
  std::set<TopicPartition> partitions;
  int64_t txn_start_ms = -1;  // when the first partition was added; -1 with no transaction
  int64_t last_update_ms = -1;
  int16_t client_txn_version = kTxnVersion0;
  bool operator==(const TxnValue&) const = default;
};

// The coordinator's entry for one transactional id: the last value written, plus the
// transition being written (pending_state), during which other requests wait.
struct TxnMetadata : TxnValue {
  std::string transactional_id;
  std::optional<TxnState> pending_state;
  // An epoch fence whose write failed: the bumped epoch was never handed out, so the next
  // fence reuses it instead of bumping again.
  bool failed_epoch_fence = false;

  const TxnValue& value() const { return *this; }
  bool transition_in_progress() const { return pending_state.has_value(); }
};

// Broker settings the rules read (Kafka's names in the comments).
struct CoordinatorConfig {
  int32_t max_timeout_ms = 900'000;                           // transaction.max.timeout.ms
  int64_t transactional_id_expiration_ms = 604'800'000;       // transactional.id.expiration.ms
  int32_t log_partitions = 50;                                // transaction.state.log.num.partitions
  int16_t txn_version = kTxnVersion0;  // the cluster's transaction.version feature level
};

}  // namespace brokerd::transactions
