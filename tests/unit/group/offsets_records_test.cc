// __consumer_offsets records: round trips, and decoding bytes laid out by hand from the
// schemas (int16 version, then the fields big-endian, strings as int16 length + bytes).
#include <gtest/gtest.h>

#include "brokerd/common/java_hash.h"

#include "brokerd/group/group_coordinator.h"
#include "brokerd/group/offsets_records.h"
#include "brokerd/protocol/wire.h"
#include "brokerd/storage/batch_builder.h"

namespace brokerd::group {
namespace {

struct Out {
  Bytes b;
  void i16(int16_t v) { for (int i = 1; i >= 0; --i) b.push_back(std::byte((v >> (8 * i)) & 0xff)); }
  void i32(int32_t v) { for (int i = 3; i >= 0; --i) b.push_back(std::byte((v >> (8 * i)) & 0xff)); }
  void i64(int64_t v) { for (int i = 7; i >= 0; --i) b.push_back(std::byte((v >> (8 * i)) & 0xff)); }
  void str(std::string_view s) {
    i16(static_cast<int16_t>(s.size()));
    for (char c : s) b.push_back(std::byte(c));
  }
};

TEST(OffsetsRecords, OffsetKeyMatchesTheSchemaLayout) {
  Out o;
  o.i16(1);
  o.str("g1");
  o.str("orders");
  o.i32(7);
  EXPECT_EQ(encode_offset_key("g1", {"orders", 7}), o.b);
  auto k = decode_key(o.b);
  ASSERT_TRUE(k);
  auto& ok = std::get<OffsetRecordKey>(*k);
  EXPECT_EQ(ok.group_id, "g1");
  EXPECT_EQ(ok.key.topic, "orders");
  EXPECT_EQ(ok.key.partition, 7);
}

TEST(OffsetsRecords, OffsetValueV3MatchesTheSchemaLayout) {
  Out o;
  o.i16(3);
  o.i64(42);
  o.i32(5);
  o.str("meta");
  o.i64(1700000000000);
  OffsetEntry e{42, 5, "meta", 1700000000000, -1};
  EXPECT_EQ(encode_offset_value(e), o.b);
  auto d = decode_offset_value(o.b);
  EXPECT_EQ(d.offset, 42);
  EXPECT_EQ(d.leader_epoch, 5);
  EXPECT_EQ(d.metadata, "meta");
  EXPECT_EQ(d.commit_timestamp, 1700000000000);
}

TEST(OffsetsRecords, DecodesAnOffsetValueV1WithExpiry) {
  Out o;
  o.i16(1);
  o.i64(9);
  o.str("");
  o.i64(100);
  o.i64(200);
  auto d = decode_offset_value(o.b);
  EXPECT_EQ(d.offset, 9);
  EXPECT_EQ(d.leader_epoch, -1);
  EXPECT_EQ(d.commit_timestamp, 100);
  EXPECT_EQ(d.expire_timestamp, 200);
}

TEST(OffsetsRecords, GroupKeyAndValueRoundTrip) {
  Out o;
  o.i16(2);
  o.str("grp");
  EXPECT_EQ(encode_group_key("grp"), o.b);
  auto k = decode_key(o.b);
  ASSERT_TRUE(k);
  EXPECT_EQ(std::get<GroupRecordKey>(*k).group_id, "grp");

  StoredGroup g;
  g.protocol_type = "consumer";
  g.generation = 3;
  g.protocol_name = "range";
  g.leader = "m1";
  g.state_timestamp = 1234;
  g.members.push_back({"m1", std::string("i1"), "c1", "/127.0.0.1", 300000, 10000, Bytes{std::byte{1}},
                       Bytes{std::byte{2}, std::byte{3}}});
  auto bytes = encode_group_value(g);
  EXPECT_EQ(bytes[0], std::byte{0});
  EXPECT_EQ(bytes[1], std::byte{kGroupValueVersion});
  auto d = decode_group_value(bytes);
  EXPECT_EQ(d.protocol_type, "consumer");
  EXPECT_EQ(d.generation, 3);
  EXPECT_EQ(d.protocol_name, "range");
  EXPECT_EQ(d.leader, "m1");
  EXPECT_EQ(d.state_timestamp, 1234);
  ASSERT_EQ(d.members.size(), 1u);
  EXPECT_EQ(d.members[0].instance_id, "i1");
  EXPECT_EQ(d.members[0].rebalance_timeout_ms, 300000);
  EXPECT_EQ(d.members[0].session_timeout_ms, 10000);
  EXPECT_EQ(d.members[0].assignment, (Bytes{std::byte{2}, std::byte{3}}));
}

TEST(OffsetsRecords, DecodesAGroupValueV0) {
  // v0: protocolType, generation, protocol, leader, members[memberId, clientId, clientHost,
  // sessionTimeout, subscription, assignment] (no rebalance timeout, no state timestamp).
  Out o;
  o.i16(0);
  o.str("consumer");
  o.i32(2);
  o.str("range");
  o.str("m");
  o.i32(1);
  o.str("m");
  o.str("c");
  o.str("/h");
  o.i32(6000);
  o.i32(0);
  o.i32(0);
  auto d = decode_group_value(o.b);
  EXPECT_EQ(d.generation, 2);
  ASSERT_EQ(d.members.size(), 1u);
  EXPECT_EQ(d.members[0].session_timeout_ms, 6000);
  EXPECT_EQ(d.members[0].rebalance_timeout_ms, -1);
}

TEST(OffsetsRecords, UnknownKeyVersionsAreSkipped) {
  Out o;
  o.i16(3);  // a KIP-848 record
  o.str("x");
  EXPECT_FALSE(decode_key(o.b));
}

TEST(OffsetsRecords, BytesAfterTheFieldsDoNotDecode) {
  Bytes key = encode_offset_key("g1", {"orders", 0});
  key.push_back(std::byte{0});
  EXPECT_THROW(decode_key(key), protocol::DecodeError);
  Bytes value = encode_offset_value(OffsetEntry{999999, -1, "", 1, -1});
  value.push_back(std::byte{0});
  EXPECT_THROW(decode_offset_value(value), protocol::DecodeError);
  Bytes group = encode_group_value(StoredGroup{"consumer", 1, "range", "m", 1, {}});
  group.push_back(std::byte{0});
  EXPECT_THROW(decode_group_value(group), protocol::DecodeError);
}

TEST(OffsetsRecords, OnlyPlainBatchesWithoutAProducerAreTheCoordinators) {
  auto batch = [](storage::BatchOptions o) {
    storage::BatchBuilder b(o);
    b.add(1, encode_group_key("g"), std::nullopt);
    return b.build();
  };
  EXPECT_TRUE(coordinator_batch(storage::RecordBatchView(batch({}))));
  storage::BatchOptions idempotent;
  idempotent.producer_id = 7;
  idempotent.producer_epoch = 0;
  idempotent.base_sequence = 0;
  EXPECT_FALSE(coordinator_batch(storage::RecordBatchView(batch(idempotent))));
  storage::BatchOptions transactional = idempotent;
  transactional.transactional = true;
  EXPECT_FALSE(coordinator_batch(storage::RecordBatchView(batch(transactional))));
  storage::BatchOptions control;
  control.control = true;
  EXPECT_FALSE(coordinator_batch(storage::RecordBatchView(batch(control))));
}

TEST(GroupPartitioning, JavaStringHashCode) {
  EXPECT_EQ(java_string_hash("abc"), 96354);
  EXPECT_EQ(java_string_hash("my-group"), -1906497762);
  EXPECT_EQ(java_string_hash("\xc3\xa9-gr\xc3\xbcppe"), -1897389896);
  EXPECT_EQ(java_string_hash("\xf0\x9f\x98\x80x"), 54959989);
  EXPECT_EQ(offsets_partition_for("my-group", 50), 36);
  EXPECT_EQ(offsets_partition_for("abc", 50), 4);
  EXPECT_EQ(offsets_partition_for("", 50), 0);
}

}  // namespace
}  // namespace brokerd::group
