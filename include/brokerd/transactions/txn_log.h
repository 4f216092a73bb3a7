#pragma once
// The records of __transaction_state, in Kafka's layout: a key is an int16 version followed by
// TransactionLogKey (version 0); a value is an int16 version followed by TransactionLogValue
// (version 0, or the flexible version 1 once transaction.version is at least 1); a null value
// (a tombstone) removes an expired transactional id. Also which partition of the topic holds a
// transactional id.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "brokerd/common/bytes.h"
#include "brokerd/transactions/types.h"

namespace brokerd::transactions {

inline constexpr std::string_view kTransactionStateTopic = "__transaction_state";
inline constexpr int16_t kTxnKeyVersion = 0;

struct TxnLogRecord {
  Bytes key;
  std::optional<Bytes> value;  // nullopt: a tombstone
};

Bytes encode_txn_key(std::string_view transactional_id);
// `version` is log_value_version(transaction.version). Throws std::invalid_argument for an
// Empty value that names partitions (Kafka refuses to write one).
Bytes encode_txn_value(const TxnValue& value, int16_t version);
TxnLogRecord txn_record(std::string_view transactional_id, const TxnValue& value, int16_t version);
TxnLogRecord txn_tombstone(std::string_view transactional_id);

// nullopt for a key version this broker does not know (loading skips those, as Kafka does).
// Throws protocol::DecodeError on malformed bytes, trailing bytes included.
std::optional<std::string> decode_txn_key(std::span<const std::byte> key);
// The id's metadata as loaded: last_producer_epoch is unknown and no transition is pending.
// Throws protocol::DecodeError on malformed bytes, an unknown version or an unknown state.
TxnMetadata decode_txn_value(std::string transactional_id, std::span<const std::byte> value);

// The partition of __transaction_state that holds a transactional id, and so the coordinator
// that owns it: Utils.abs(transactionalId.hashCode) % partitions.
int32_t partition_for(std::string_view transactional_id, int32_t partitions);

}  // namespace brokerd::transactions
