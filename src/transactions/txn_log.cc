#include "brokerd/transactions/txn_log.h"

#include "brokerd/common/java_hash.h"

#include <limits>
#include <stdexcept>

#include "brokerd/protocol/messages/transaction_log_key.h"
#include "brokerd/protocol/messages/transaction_log_value.h"
#include "brokerd/protocol/coordinator_record.h"
#include "brokerd/protocol/wire.h"
#include "brokerd/transactions/states.h"

namespace brokerd::transactions {

Bytes encode_txn_key(std::string_view transactional_id) {
  protocol::TransactionLogKey k;
  k.transactional_id = std::string(transactional_id);
  return protocol::versioned_record(kTxnKeyVersion, k);
}

Bytes encode_txn_value(const TxnValue& value, int16_t version) {
  if (value.state == TxnState::empty && !value.partitions.empty())
    throw std::invalid_argument("an Empty transaction state names no partitions");
  protocol::TransactionLogValue v;
  v.producer_id = value.producer_id;
  // Version 0 has no place for these tagged fields: a coordinator below transaction.version 1
  // loses them, as Kafka's does (they only matter to version 2 clients, which need level 2).
  if (version >= 1) {
    v.previous_producer_id = value.previous_producer_id;
    v.next_producer_id = value.next_producer_id;
    v.client_transaction_version = value.client_txn_version;
  }
  v.producer_epoch = value.producer_epoch;
  v.transaction_timeout_ms = value.timeout_ms;
  v.transaction_status = static_cast<int8_t>(value.state);
  v.transaction_last_update_timestamp_ms = value.last_update_ms;
  v.transaction_start_timestamp_ms = value.txn_start_ms;
  // Kafka writes a null list for Empty and one entry per topic otherwise; the set is ordered
  // by topic, so a topic's partitions are adjacent.
  if (value.state == TxnState::empty) {
    v.transaction_partitions = std::nullopt;
  } else {
    std::vector<protocol::TransactionLogValue::PartitionsSchema> topics;
    for (const auto& tp : value.partitions) {
      if (topics.empty() || topics.back().topic != tp.topic) {
        topics.emplace_back();
        topics.back().topic = tp.topic;
      }
      topics.back().partition_ids.push_back(tp.partition);
    }
    v.transaction_partitions = std::move(topics);
  }
  return protocol::versioned_record(version, v);
}

TxnLogRecord txn_record(std::string_view transactional_id, const TxnValue& value, int16_t version) {
  return TxnLogRecord{encode_txn_key(transactional_id), encode_txn_value(value, version)};
}

TxnLogRecord txn_tombstone(std::string_view transactional_id) {
  return TxnLogRecord{encode_txn_key(transactional_id), std::nullopt};
}

std::optional<std::string> decode_txn_key(std::span<const std::byte> key) {
  protocol::Reader r(key);
  int16_t version = r.i16();
  if (version < protocol::TransactionLogKey::min_version || version > protocol::TransactionLogKey::max_version)
    return std::nullopt;
  protocol::TransactionLogKey k;
  k.decode(r, version);
  protocol::expect_record_end(r, "TransactionLogKey");
  return std::move(k.transactional_id);
}

TxnMetadata decode_txn_value(std::string transactional_id, std::span<const std::byte> value) {
  protocol::Reader r(value);
  int16_t version = r.i16();
  if (version < protocol::TransactionLogValue::min_version || version > protocol::TransactionLogValue::max_version)
    throw protocol::DecodeError("unknown TransactionLogValue version " + std::to_string(version));
  protocol::TransactionLogValue v;
  v.decode(r, version);
  protocol::expect_record_end(r, "TransactionLogValue");
  auto state = state_from_id(v.transaction_status);
  if (!state) throw protocol::DecodeError("unknown transaction state id " + std::to_string(v.transaction_status));

  TxnMetadata md;
  md.transactional_id = std::move(transactional_id);
  md.producer_id = v.producer_id;
  md.previous_producer_id = v.previous_producer_id;
  md.next_producer_id = v.next_producer_id;
  md.producer_epoch = v.producer_epoch;
  md.last_producer_epoch = kNoProducerEpoch;
  md.timeout_ms = v.transaction_timeout_ms;
  md.state = *state;
  md.txn_start_ms = v.transaction_start_timestamp_ms;
  md.last_update_ms = v.transaction_last_update_timestamp_ms;
  md.client_txn_version = v.client_transaction_version;
  // An Empty id has no transaction, whatever the record says (Kafka ignores the list too).
  if (md.state != TxnState::empty && v.transaction_partitions) {
    for (const auto& t : *v.transaction_partitions)
      for (int32_t p : t.partition_ids) md.partitions.insert(TopicPartition{t.topic, p});
  }
  return md;
}


int32_t partition_for(std::string_view transactional_id, int32_t partitions) {
  return java_abs(java_string_hash(transactional_id)) % partitions;
}

}  // namespace brokerd::transactions
