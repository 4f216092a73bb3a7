// Byte vectors written by hand from the protocol description (not from the generator), so the
// generated codecs are checked against the spec rather than against themselves.
#include <gtest/gtest.h>

#include "brokerd/protocol/framing.h"
#include "brokerd/protocol/messages/api_versions_request.h"
#include "brokerd/protocol/messages/metadata_request.h"
#include "brokerd/protocol/messages/metadata_response.h"
#include "brokerd/protocol/messages/produce_request.h"
#include "unit/protocol/test_bytes.h"

namespace brokerd::protocol {
namespace {

using test::append;
using test::bytes_of;

Bytes frame(const Bytes& body) { return with_size_prefix(body); }

TEST(SpecVectors, ApiVersionsRequestV3AsLibrdkafkaSendsIt) {
  Bytes body;
  append(body, {0x00, 0x12, 0x00, 0x03});  // api key 18, version 3
  append(body, {0x00, 0x00, 0x00, 0x01});  // correlation id 1
  append(body, {0x00, 0x07});              // client id: int16 length even in header v2
  append(body, "rdkafka");
  append(body, {0x00});                    // header tagged fields
  append(body, {0x0b});                    // compact "librdkafka"
  append(body, "librdkafka");
  append(body, {0x06});                    // compact "2.3.0"
  append(body, "2.3.0");
  append(body, {0x00});                    // body tagged fields
  Bytes expected = frame(body);

  ApiVersionsRequest req;
  req.client_software_name = "librdkafka";
  req.client_software_version = "2.3.0";
  EXPECT_EQ(encode_request(req, 3, 1, "rdkafka"), expected);

  Reader r(std::span<const std::byte>(expected).subspan(4));
  auto h = decode_request_header(r);
  EXPECT_EQ(h.api_key, 18);
  EXPECT_EQ(h.api_version, 3);
  EXPECT_EQ(h.correlation_id, 1);
  EXPECT_EQ(h.client_id, "rdkafka");
  ApiVersionsRequest decoded;
  decoded.decode(r, h.api_version);
  EXPECT_EQ(decoded, req);
  EXPECT_EQ(r.remaining(), 0u);
}

TEST(SpecVectors, MetadataRequestV12) {
  Bytes body;
  append(body, {0x02});                        // compact array, 1 topic
  for (int i = 0; i < 16; ++i) append(body, {0x00});  // topic id: zero uuid
  append(body, {0x07});                        // compact string "orders"
  append(body, "orders");
  append(body, {0x00});                        // topic tagged fields
  append(body, {0x01});                        // allow_auto_topic_creation
  append(body, {0x00});                        // include_topic_authorized_operations
  append(body, {0x00});                        // tagged fields

  MetadataRequest m;
  m.topics.emplace().emplace_back().name = "orders";
  m.allow_auto_topic_creation = true;
  Writer w;
  m.encode(w, 12);
  EXPECT_EQ(std::move(w).finish_bytes(), body);

  // All topics: null array.
  Bytes all = bytes_of({0x00, 0x00, 0x01, 0x00});
  Reader r(all);
  MetadataRequest decoded;
  decoded.decode(r, 12);
  EXPECT_FALSE(decoded.topics.has_value());
  EXPECT_FALSE(decoded.allow_auto_topic_creation);
  EXPECT_TRUE(decoded.include_topic_authorized_operations);
}

TEST(SpecVectors, MetadataRequestV0EmptyMeansAll) {
  Bytes body = bytes_of({0x00, 0x00, 0x00, 0x00});
  Reader r(body);
  MetadataRequest m;
  m.decode(r, 0);
  ASSERT_TRUE(m.topics.has_value());
  EXPECT_TRUE(m.topics->empty());
}

TEST(SpecVectors, ProduceRequestV9WithRecords) {
  Bytes blob;
  for (int i = 0; i < 70; ++i) blob.push_back(static_cast<std::byte>(i));

  Bytes body;
  append(body, {0x00});                    // transactional id: null compact string
  append(body, {0xff, 0xff});              // acks -1
  append(body, {0x00, 0x00, 0x75, 0x30});  // timeout 30000 ms
  append(body, {0x02});                    // 1 topic
  append(body, {0x02, 't'});               // name "t"
  append(body, {0x02});                    // 1 partition
  append(body, {0x00, 0x00, 0x00, 0x04});  // index 4
  append(body, {0x47});                    // compact records length 70 + 1
  append(body, blob);
  append(body, {0x00, 0x00, 0x00});        // partition, topic, request tagged fields

  auto owner = std::make_shared<Bytes>(body);
  Reader r(*owner, owner);
  ProduceRequest req;
  req.decode(r, 9);
  EXPECT_EQ(r.remaining(), 0u);
  EXPECT_FALSE(req.transactional_id.has_value());
  EXPECT_EQ(req.acks, -1);
  EXPECT_EQ(req.timeout_ms, 30000);
  ASSERT_EQ(req.topic_data.size(), 1u);
  EXPECT_EQ(req.topic_data[0].name, "t");
  ASSERT_EQ(req.topic_data[0].partition_data.size(), 1u);
  const auto& part = req.topic_data[0].partition_data[0];
  EXPECT_EQ(part.index, 4);
  EXPECT_EQ(part.records.to_bytes(), blob);
  // The records view points into the frame.
  EXPECT_EQ(std::get<SharedBytes>(part.records.parts.at(0)).data.data(), owner->data() + 16);

  Writer w;
  req.encode(w, 9);
  EXPECT_EQ(std::move(w).finish_bytes(), body);
}

TEST(SpecVectors, ProduceRequestV3NonFlexible) {
  Bytes body;
  append(body, {0x00, 0x02, 'i', 'd'});    // transactional id "id"
  append(body, {0x00, 0x01});              // acks 1
  append(body, {0x00, 0x00, 0x03, 0xe8});  // timeout 1000
  append(body, {0x00, 0x00, 0x00, 0x01});  // 1 topic
  append(body, {0x00, 0x01, 'x'});
  append(body, {0x00, 0x00, 0x00, 0x01});  // 1 partition
  append(body, {0x00, 0x00, 0x00, 0x00});  // index 0
  append(body, {0xff, 0xff, 0xff, 0xff});  // null records

  ProduceRequest req;
  req.transactional_id = "id";
  req.acks = 1;
  req.timeout_ms = 1000;
  auto& t = req.topic_data.emplace_back();
  t.name = "x";
  t.partition_data.emplace_back();
  Writer w;
  req.encode(w, 3);
  EXPECT_EQ(std::move(w).finish_bytes(), body);
}

TEST(SpecVectors, MetadataResponseV1Broker) {
  Bytes body;
  append(body, {0x00, 0x00, 0x00, 0x01});  // 1 broker
  append(body, {0x00, 0x00, 0x00, 0x02});  // node id 2
  append(body, {0x00, 0x02, 'h', '1'});    // host
  append(body, {0x00, 0x00, 0x23, 0x84});  // port 9092
  append(body, {0xff, 0xff});              // rack null (v1+)
  append(body, {0x00, 0x00, 0x00, 0x07});  // controller id 7
  append(body, {0x00, 0x00, 0x00, 0x00});  // no topics
  Reader r(body);
  MetadataResponse m;
  m.decode(r, 1);
  EXPECT_EQ(r.remaining(), 0u);
  ASSERT_EQ(m.brokers.size(), 1u);
  EXPECT_EQ(m.brokers[0].node_id, 2);
  EXPECT_EQ(m.brokers[0].host, "h1");
  EXPECT_EQ(m.brokers[0].port, 9092);
  EXPECT_FALSE(m.brokers[0].rack.has_value());
  EXPECT_EQ(m.controller_id, 7);
}

}  // namespace
}  // namespace brokerd::protocol
