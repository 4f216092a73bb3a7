// Tagged fields in generated messages: known tags decode into members, unknown ones are
// kept and re-encoded in tag order, defaults are omitted.
#include <gtest/gtest.h>

#include "brokerd/protocol/messages/api_versions_response.h"
#include "brokerd/protocol/messages/fetch_response.h"
#include "unit/protocol/test_bytes.h"

namespace brokerd::protocol {
namespace {

using test::append;
using test::bytes_of;

Bytes encode_v(const ApiVersionsResponse& m, int16_t v) {
  Writer w;
  m.encode(w, v);
  return std::move(w).finish_bytes();
}

TEST(TaggedFields, DefaultsAreOmitted) {
  ApiVersionsResponse m;
  // error_code, api_keys (empty compact array), throttle_time_ms, no tags.
  EXPECT_EQ(encode_v(m, 3), bytes_of({0, 0, 0x01, 0, 0, 0, 0, 0x00}));
}

TEST(TaggedFields, KnownAndUnknownInTagOrder) {
  ApiVersionsResponse m;
  m.finalized_features_epoch = 5;  // tag 1
  m.zk_migration_ready = true;     // tag 3
  m.unknown_tagged_fields.push_back(TaggedField{2, bytes_of({0x01})});  // between known tags?
  m.unknown_tagged_fields.push_back(TaggedField{9, bytes_of({0xde, 0xad})});
  // Tag 2 is known (FinalizedFeatures), so a hand-built unknown tag 2 is written as-is in order.
  Bytes expected = bytes_of({0, 0, 0x01, 0, 0, 0, 0});
  append(expected, {0x04});                                       // four tagged fields
  append(expected, {0x01, 0x08, 0, 0, 0, 0, 0, 0, 0, 5});         // tag 1: int64 5
  append(expected, {0x02, 0x01, 0x01});                           // tag 2 (raw)
  append(expected, {0x03, 0x01, 0x01});                           // tag 3: true
  append(expected, {0x09, 0x02, 0xde, 0xad});                     // tag 9 (raw)
  EXPECT_EQ(encode_v(m, 3), expected);
}

TEST(TaggedFields, UnknownTagsSurviveDecodeAndReencode) {
  Bytes in = bytes_of({0, 0, 0x01, 0, 0, 0, 0});
  append(in, {0x03});
  append(in, {0x01, 0x08, 0, 0, 0, 0, 0, 0, 0, 7});  // known: FinalizedFeaturesEpoch
  append(in, {0x05, 0x03, 0xaa, 0xbb, 0xcc});        // unknown tag 5
  append(in, {0x80, 0x01, 0x00});                    // unknown tag 128, empty
  Reader r(in);
  ApiVersionsResponse m;
  m.decode(r, 3);
  EXPECT_EQ(r.remaining(), 0u);
  EXPECT_EQ(m.finalized_features_epoch, 7);
  ASSERT_EQ(m.unknown_tagged_fields.size(), 2u);
  EXPECT_EQ(m.unknown_tagged_fields[0].tag, 5u);
  EXPECT_EQ(m.unknown_tagged_fields[0].data, bytes_of({0xaa, 0xbb, 0xcc}));
  EXPECT_EQ(m.unknown_tagged_fields[1].tag, 128u);
  EXPECT_EQ(encode_v(m, 3), in);
}

TEST(TaggedFields, TaggedStructInNestedElement) {
  // FetchResponse v12+: PartitionData.DivergingEpoch is tag 0 of the partition struct.
  FetchResponse m;
  auto& topic = m.responses.emplace_back();
  topic.topic = "t";
  auto& p = topic.partitions.emplace_back();
  p.partition_index = 3;
  p.diverging_epoch.epoch = 9;
  p.diverging_epoch.end_offset = 100;
  p.records = Records::empty();
  Writer w;
  m.encode(w, 12);
  Bytes b = std::move(w).finish_bytes();
  Reader r(b);
  FetchResponse out;
  out.decode(r, 12);
  EXPECT_EQ(out, m);
  EXPECT_EQ(out.responses.at(0).partitions.at(0).diverging_epoch.epoch, 9);
  // v11 has no DivergingEpoch and the field is not ignorable: a set value cannot be dropped.
  Writer w11;
  EXPECT_THROW(m.encode(w11, 11), EncodeError);
  p.diverging_epoch = {};
  Writer w11b;
  EXPECT_NO_THROW(m.encode(w11b, 11));
}

}  // namespace
}  // namespace brokerd::protocol
