#include "brokerd/transactions/txn_log.h"

#include <gtest/gtest.h>

#include <initializer_list>

#include "brokerd/common/java_hash.h"
#include "brokerd/protocol/wire.h"

namespace brokerd::transactions {
namespace {

Bytes bytes(std::initializer_list<int> v) {
  Bytes out;
  for (int b : v) out.push_back(static_cast<std::byte>(b));
  return out;
}

TxnValue ongoing_value() {
  TxnValue v;
  v.producer_id = 1000;
  v.previous_producer_id = 1000;
  v.producer_epoch = 5;
  v.timeout_ms = 60'000;
  v.state = TxnState::ongoing;
  v.partitions = {{"t", 0}, {"t", 2}};
  v.last_update_ms = 2000;
  v.txn_start_ms = 1500;
  return v;
}

TEST(TxnLog, KeyBytesFromTheSchema) {
  // int16 version 0, then TransactionalId as an int16-length string.
  EXPECT_EQ(encode_txn_key("tx"), bytes({0x00, 0x00, 0x00, 0x02, 't', 'x'}));
  EXPECT_EQ(decode_txn_key(encode_txn_key("tx")), "tx");
}

TEST(TxnLog, ValueV0BytesFromTheSchema) {
  const Bytes expected = bytes({
      0x00, 0x00,                                      // version 0
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xE8,  // ProducerId 1000
      0x00, 0x05,                                      // ProducerEpoch 5
      0x00, 0x00, 0xEA, 0x60,                          // TransactionTimeoutMs 60000
      0x01,                                            // TransactionStatus Ongoing
      0x00, 0x00, 0x00, 0x01,                          // one topic
      0x00, 0x01, 't',                                 //   Topic "t"
      0x00, 0x00, 0x00, 0x02,                          //   two partitions
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,  //   0, 2
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0xD0,  // TransactionLastUpdateTimestampMs 2000
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0xDC,  // TransactionStartTimestampMs 1500
  });
  EXPECT_EQ(encode_txn_value(ongoing_value(), 0), expected);
}

TEST(TxnLog, ValueV1BytesFromTheSchema) {
  TxnValue v = ongoing_value();
  v.client_txn_version = kTxnVersion2;
  const Bytes expected = bytes({
      0x00, 0x01,                                      // version 1 (flexible)
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xE8,  // ProducerId 1000
      0x00, 0x05,                                      // ProducerEpoch 5
      0x00, 0x00, 0xEA, 0x60,                          // TransactionTimeoutMs
      0x01,                                            // Ongoing
      0x02,                                            // compact array: one topic
      0x02, 't',                                       //   compact string "t"
      0x03,                                            //   compact array: two partitions
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,  //   0, 2
      0x00,                                            //   no tagged fields
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0xD0,  // last update
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0xDC,  // start
      0x02,                                            // two tagged fields (NextProducerId is -1, the default)
      0x00, 0x08,                                      //   tag 0 PreviousProducerId, 8 bytes
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xE8,  //   1000
      0x02, 0x02, 0x00, 0x02,                          //   tag 2 ClientTransactionVersion 2
  });
  EXPECT_EQ(encode_txn_value(v, 1), expected);
}

TEST(TxnLog, EmptyStateWritesNullPartitions) {
  TxnValue v;
  v.producer_id = 7;
  v.producer_epoch = 0;
  v.timeout_ms = 1000;
  v.state = TxnState::empty;
  Bytes b = encode_txn_value(v, 0);
  // version, pid, epoch, timeout, status, then the null array's -1 count.
  ASSERT_GE(b.size(), 21u);
  EXPECT_EQ(Bytes(b.begin() + 17, b.begin() + 21), bytes({0xFF, 0xFF, 0xFF, 0xFF}));
  v.partitions = {{"t", 0}};
  EXPECT_THROW(encode_txn_value(v, 0), std::invalid_argument);
}

TEST(TxnLog, RoundTripsBothVersions) {
  TxnValue v = ongoing_value();
  v.partitions.insert({"a", 3});
  v.partitions.insert({"z", 1});
  TxnMetadata md = decode_txn_value("tx", encode_txn_value(v, 0));
  EXPECT_EQ(md.transactional_id, "tx");
  EXPECT_EQ(md.partitions, v.partitions);
  EXPECT_EQ(md.producer_id, 1000);
  EXPECT_EQ(md.producer_epoch, 5);
  EXPECT_EQ(md.state, TxnState::ongoing);
  EXPECT_EQ(md.txn_start_ms, 1500);
  EXPECT_EQ(md.last_update_ms, 2000);
  // Version 0 has no previous/next ids nor client version.
  EXPECT_EQ(md.previous_producer_id, kNoProducerId);
  EXPECT_EQ(md.client_txn_version, kTxnVersion0);

  v.previous_producer_id = 999;
  v.next_producer_id = 2000;
  v.client_txn_version = kTxnVersion2;
  v.state = TxnState::prepare_commit;
  v.last_producer_epoch = 4;  // not in the log: loaded as unknown
  TxnMetadata md1 = decode_txn_value("tx", encode_txn_value(v, 1));
  TxnValue expected = v;
  expected.last_producer_epoch = kNoProducerEpoch;
  EXPECT_EQ(md1.value(), expected);
  EXPECT_FALSE(md1.pending_state);
}

TEST(TxnLog, RefusesWhatItCannotRead) {
  EXPECT_FALSE(decode_txn_key(bytes({0x00, 0x01, 0x00, 0x00})));  // an unknown key version
  EXPECT_THROW(decode_txn_key(bytes({0x00, 0x00, 0x00, 0x02, 't'})), protocol::DecodeError);
  Bytes trailing = encode_txn_key("tx");
  trailing.push_back(std::byte{0});
  EXPECT_THROW(decode_txn_key(trailing), protocol::DecodeError);

  Bytes v = encode_txn_value(ongoing_value(), 0);
  Bytes v9 = v;
  v9[1] = std::byte{9};
  EXPECT_THROW(decode_txn_value("tx", v9), protocol::DecodeError);
  Bytes bad_state = v;
  bad_state[16] = std::byte{8};
  EXPECT_THROW(decode_txn_value("tx", bad_state), protocol::DecodeError);
}

TEST(TxnLog, TombstoneHasAKeyAndNoValue) {
  TxnLogRecord r = txn_tombstone("tx");
  EXPECT_EQ(r.key, encode_txn_key("tx"));
  EXPECT_FALSE(r.value);
}

TEST(TxnLog, PartitionForIsJavasHashCodeAbsModulo) {
  EXPECT_EQ(java_string_hash(""), 0);
  EXPECT_EQ(java_string_hash("hello"), 99162322);
  EXPECT_EQ(partition_for("hello", 50), 22);
  // Utils.abs, not a sign mask: a negative hash keeps its magnitude.
  EXPECT_EQ(java_string_hash("my-txn"), -1061187895);
  EXPECT_EQ(partition_for("my-txn", 50), 45);
  EXPECT_EQ(partition_for("txn-42", 50), 43);
  // Integer.MIN_VALUE has no absolute value; Kafka maps it to 0.
  EXPECT_EQ(java_string_hash("polygenelubricants"), INT32_MIN);
  EXPECT_EQ(partition_for("polygenelubricants", 50), 0);
  // UTF-16 code units, a surrogate pair for a code point above U+FFFF.
  EXPECT_EQ(java_string_hash("\xC3\xA9moji-\xF0\x9F\x98\x80"), -712758458);
  EXPECT_EQ(partition_for("\xC3\xA9moji-\xF0\x9F\x98\x80", 50), 8);
}

}  // namespace
}  // namespace brokerd::transactions
