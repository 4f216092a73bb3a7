#include "brokerd/storage/record_batch.h"

#include <gtest/gtest.h>

#include "brokerd/storage/batch_builder.h"
#include "brokerd/storage/crc32c.h"
#include "storage_test_util.h"

namespace brokerd::storage {
namespace {

using testing::make_batch;

std::string str(std::span<const std::byte> s) { return std::string(reinterpret_cast<const char*>(s.data()), s.size()); }

void fix_crc(Bytes& b) { MutableRecordBatchView(b).set_crc(RecordBatchView(b).compute_crc()); }

void put_be32(Bytes& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<std::byte>(v >> (24 - 8 * i));
}

class BatchCodecTest : public ::testing::TestWithParam<Compression> {};

TEST_P(BatchCodecTest, BuildParseRoundTrip) {
  BatchOptions o;
  o.compression = GetParam();
  o.producer_id = 77;
  o.producer_epoch = 3;
  o.base_sequence = 10;
  BatchBuilder b(o);
  RecordHeader h{as_bytes("trace"), as_bytes("abc")};
  RecordHeader hnull{as_bytes("empty"), std::nullopt};
  std::vector<RecordHeader> headers{h, hnull};
  b.add(5000, as_bytes("k0"), as_bytes("v0"), headers);
  b.add(4990, std::nullopt, as_bytes("no key"));
  b.add(5020, as_bytes("tombstone"), std::nullopt);
  std::string big(20000, 'x');
  b.add(5010, as_bytes("big"), as_bytes(big));
  Bytes bytes = b.build();

  auto v = validate_batches(bytes, BatchLimits{});
  ASSERT_TRUE(v.ok()) << v.message;
  EXPECT_EQ(v.record_count, 4);

  RecordBatchView view(bytes);
  EXPECT_EQ(view.magic(), 2);
  EXPECT_EQ(view.compression(), GetParam());
  EXPECT_EQ(view.records_count(), 4);
  EXPECT_EQ(view.last_offset_delta(), 3);
  EXPECT_EQ(view.base_timestamp(), 5000);
  EXPECT_EQ(view.max_timestamp(), 5020);
  EXPECT_EQ(view.producer_id(), 77);
  EXPECT_EQ(view.producer_epoch(), 3);
  EXPECT_EQ(view.base_sequence(), 10);
  EXPECT_EQ(view.partition_leader_epoch(), -1);
  EXPECT_TRUE(view.crc_valid());

  MutableRecordBatchView mv(bytes);
  mv.set_base_offset(1000);
  mv.set_partition_leader_epoch(9);
  EXPECT_TRUE(view.crc_valid());  // both lie outside the CRC
  EXPECT_EQ(view.base_offset(), 1000);
  EXPECT_EQ(view.partition_leader_epoch(), 9);

  RecordReader reader(view);
  Record r;
  ASSERT_TRUE(reader.next(r));
  EXPECT_EQ(r.offset, 1000);
  EXPECT_EQ(r.timestamp, 5000);
  EXPECT_EQ(str(*r.key), "k0");
  EXPECT_EQ(str(*r.value), "v0");
  ASSERT_EQ(r.headers.size(), 2u);
  EXPECT_EQ(str(r.headers[0].key), "trace");
  EXPECT_EQ(str(*r.headers[0].value), "abc");
  EXPECT_FALSE(r.headers[1].value);
  ASSERT_TRUE(reader.next(r));
  EXPECT_EQ(r.offset, 1001);
  EXPECT_EQ(r.timestamp, 4990);
  EXPECT_FALSE(r.key);
  ASSERT_TRUE(reader.next(r));
  EXPECT_FALSE(r.value);
  ASSERT_TRUE(reader.next(r));
  EXPECT_EQ(r.offset, 1003);
  EXPECT_EQ(r.value->size(), big.size());
  EXPECT_FALSE(reader.next(r));
  EXPECT_EQ(reader.error(), ErrorCode::none);
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, BatchCodecTest,
                         ::testing::Values(Compression::none, Compression::gzip, Compression::snappy,
                                           Compression::lz4, Compression::zstd),
                         [](const auto& info) { return std::string(compression_name(info.param)); });

TEST(RecordBatch, LogAppendTimeKeepsCrcValid) {
  Bytes b = make_batch(3);
  MutableRecordBatchView v(b);
  v.set_log_append_time(123456);
  EXPECT_TRUE(v.crc_valid());
  EXPECT_EQ(v.timestamp_type(), TimestampType::log_append_time);
  EXPECT_EQ(v.max_timestamp(), 123456);
  EXPECT_TRUE(validate_batches(b, BatchLimits{}).ok());
}

TEST(Validate, BadCrc) {
  Bytes b = make_batch(3);
  b[70] ^= std::byte{0x01};
  auto r = validate_batches(b, BatchLimits{});
  EXPECT_EQ(r.error, ErrorCode::corrupt_message);
}

TEST(Validate, Truncated) {
  Bytes b = make_batch(3);
  b.resize(b.size() - 1);
  EXPECT_EQ(validate_batches(b, BatchLimits{}).error, ErrorCode::corrupt_message);
  b.resize(10);
  EXPECT_EQ(validate_batches(b, BatchLimits{}).error, ErrorCode::corrupt_message);
  EXPECT_EQ(validate_batches({}, BatchLimits{}).error, ErrorCode::corrupt_message);
}

TEST(Validate, SecondBatchTruncatedReportsValidPrefix) {
  Bytes a = make_batch(3), b = make_batch(2);
  Bytes both = a;
  both.insert(both.end(), b.begin(), b.end() - 5);
  auto r = validate_batches(both, BatchLimits{});
  EXPECT_EQ(r.error, ErrorCode::corrupt_message);
  EXPECT_EQ(r.valid_bytes, a.size());
  EXPECT_EQ(r.batch_count, 1);
}

TEST(Validate, OldMagic) {
  Bytes b = make_batch(1);
  b[batch_layout::magic] = std::byte{1};
  EXPECT_EQ(validate_batches(b, BatchLimits{}).error, ErrorCode::unsupported_for_message_format);
  b[batch_layout::magic] = std::byte{7};
  EXPECT_EQ(validate_batches(b, BatchLimits{}).error, ErrorCode::corrupt_message);
}

TEST(Validate, RecordCountMismatch) {
  Bytes b = make_batch(3);
  put_be32(b, batch_layout::records_count, 4);  // header disagrees with lastOffsetDelta
  fix_crc(b);
  EXPECT_EQ(validate_batches(b, BatchLimits{}).error, ErrorCode::invalid_record);
  put_be32(b, batch_layout::last_offset_delta, 3);  // consistent header, but only 3 records
  fix_crc(b);
  EXPECT_EQ(validate_batches(b, BatchLimits{}).error, ErrorCode::corrupt_message);
  put_be32(b, batch_layout::records_count, 2);
  put_be32(b, batch_layout::last_offset_delta, 1);  // fewer declared than present
  fix_crc(b);
  EXPECT_EQ(validate_batches(b, BatchLimits{}).error, ErrorCode::corrupt_message);
  put_be32(b, batch_layout::records_count, 0);
  put_be32(b, batch_layout::last_offset_delta, static_cast<uint32_t>(-1));
  fix_crc(b);
  EXPECT_EQ(validate_batches(b, BatchLimits{}).error, ErrorCode::invalid_record);
}

TEST(Validate, BadRecordFraming) {
  Bytes b = make_batch(2, 10);
  // The first record's length varint: claim more bytes than the batch holds.
  b[batch_layout::header_size] = std::byte{0x7E};
  fix_crc(b);
  EXPECT_EQ(validate_batches(b, BatchLimits{}).error, ErrorCode::corrupt_message);
}

TEST(Validate, Oversize) {
  Bytes b = make_batch(10, 1000);
  BatchLimits lim;
  lim.max_batch_bytes = b.size() - 1;
  EXPECT_EQ(validate_batches(b, lim).error, ErrorCode::message_too_large);
  lim.max_batch_bytes = b.size();
  EXPECT_TRUE(validate_batches(b, lim).ok());
}

TEST(Validate, UnknownCodec) {
  Bytes b = make_batch(1);
  b[batch_layout::attributes + 1] = std::byte{0x07};
  fix_crc(b);
  EXPECT_EQ(validate_batches(b, BatchLimits{}).error, ErrorCode::unsupported_compression_type);
}

TEST(Validate, CompressedBombIsRefused) {
  BatchOptions o;
  o.compression = Compression::zstd;
  BatchBuilder bb(o);
  std::string big(4 << 20, 'a');
  bb.add(1, as_bytes("k"), as_bytes(big));
  Bytes b = bb.build();
  EXPECT_LT(b.size(), 4096u);
  BatchLimits lim;
  lim.max_decompressed_bytes = 1 << 20;
  EXPECT_EQ(validate_batches(b, lim).error, ErrorCode::invalid_record);
}

TEST(Validate, CorruptCompressedPayload) {
  BatchOptions o;
  o.compression = Compression::lz4;
  BatchBuilder bb(o);
  bb.add(1, "k", "some value that compresses a bit a bit a bit");
  Bytes b = bb.build();
  b[b.size() - 3] ^= std::byte{0xFF};
  fix_crc(b);
  EXPECT_EQ(validate_batches(b, BatchLimits{}).error, ErrorCode::corrupt_message);
}

TEST(Validate, Garbage) {
  Bytes g(500);
  for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<std::byte>(i * 131 + 7);
  EXPECT_NE(validate_batches(g, BatchLimits{}).error, ErrorCode::none);
}

Bytes one_record(BatchOptions o) {
  BatchBuilder b(o);
  b.add(1000, as_bytes("k"), as_bytes("v"));
  return b.build();
}

TEST(Validate, ClientBatchesFollowTheProduceRules) {
  BatchLimits client;
  client.from_client = true;
  BatchOptions control;
  control.control = true;
  auto r = validate_batches(one_record(control), client);
  EXPECT_EQ(r.error, ErrorCode::invalid_record);
  EXPECT_EQ(r.message, "Clients are not allowed to write control records");
  BatchOptions no_sequence;
  no_sequence.producer_id = 42;
  no_sequence.producer_epoch = 0;
  r = validate_batches(one_record(no_sequence), client);
  EXPECT_EQ(r.error, ErrorCode::invalid_record);
  EXPECT_EQ(r.message, "Invalid sequence number -1 in record batch with producerId 42");
  BatchOptions transactional = no_sequence;
  transactional.base_sequence = 0;
  transactional.transactional = true;
  // A client's transactional batch is the producer state's to judge, unless the append
  // refuses transactions outright; without a producer id it is never valid.
  EXPECT_TRUE(validate_batches(one_record(transactional), client).ok());
  BatchLimits refusing = client;
  refusing.refuse_transactional = true;
  EXPECT_EQ(validate_batches(one_record(transactional), refusing).error, ErrorCode::invalid_txn_state);
  BatchOptions no_producer;
  no_producer.transactional = true;
  EXPECT_EQ(validate_batches(one_record(no_producer), client).error, ErrorCode::invalid_record);
  // The node's own writers (and followers) are not clients.
  for (const auto& o : {control, no_sequence, transactional})
    EXPECT_TRUE(validate_batches(one_record(o), BatchLimits{}).ok());
}

TEST(Validate, EveryBadRecordOfABatchIsNamed) {
  BatchBuilder b;
  for (int i = 0; i < 20; ++i) {
    std::string v = "v" + std::to_string(i);
    if (i == 0 || i == 10) {
      b.add(1000, std::nullopt, as_bytes(v));
    } else {
      b.add(1000, as_bytes("k"), as_bytes(v));
    }
  }
  Bytes bytes = b.build();
  BatchLimits limits;
  limits.require_keys = true;
  limits.partition_name = "t-0";
  auto r = validate_batches(bytes, limits);
  EXPECT_EQ(r.error, ErrorCode::invalid_record);
  ASSERT_EQ(r.record_errors.size(), 2u);
  EXPECT_EQ(r.record_errors[0].index, 0);
  EXPECT_EQ(r.record_errors[1].index, 10);
  EXPECT_EQ(r.record_errors[1].message, "Compacted topic cannot accept message without key in topic partition t-0.");
  EXPECT_EQ(r.message.rfind("One or more records have been rejected due to 2 record errors in total", 0), 0u) << r.message;
  // With a timestamp among the reasons the batch is INVALID_TIMESTAMP, each record its own.
  limits.latest_timestamp = 999;
  r = validate_batches(bytes, limits);
  EXPECT_EQ(r.error, ErrorCode::invalid_timestamp);
  EXPECT_EQ(r.record_errors.size(), 20u);
}

}  // namespace
}  // namespace brokerd::storage
