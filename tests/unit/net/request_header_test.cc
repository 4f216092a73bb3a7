#include <gtest/gtest.h>

#include "net/request_header.h"
#include "test_support.h"

namespace brokerd::net {
namespace {

std::vector<std::byte> frame_of(const std::vector<std::byte>& with_size) {
  return {with_size.begin() + 4, with_size.end()};
}

TEST(RequestHeader, ParsesFixedPrefixAndClientId) {
  auto frame = frame_of(test::encode_request(18, 0x01020304, "body", "client-1"));
  auto h = parse_request_header(frame);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->api_key, 18);
  EXPECT_EQ(h->api_version, 3);
  EXPECT_EQ(h->correlation_id, 0x01020304);
  EXPECT_EQ(h->client_id, "client-1");
  EXPECT_EQ(h->header_end, 10u + 8u);
}

TEST(RequestHeader, NullClientId) {
  auto frame = frame_of(test::encode_request(0, -7, "", std::nullopt));
  auto h = parse_request_header(frame);
  ASSERT_TRUE(h);
  EXPECT_FALSE(h->client_id.has_value());
  EXPECT_EQ(h->correlation_id, -7);
  EXPECT_EQ(h->header_end, 10u);
}

TEST(RequestHeader, RejectsMalformedClientId) {
  auto frame = frame_of(test::encode_request(0, 1, "", "abc"));
  frame.resize(frame.size() - 1);  // client_id claims 3 bytes, 2 present
  EXPECT_FALSE(parse_request_header(frame));
  auto negative = frame_of(test::encode_request(0, 1, "", std::nullopt));
  negative[9] = std::byte{0xfe};  // length -2
  EXPECT_FALSE(parse_request_header(negative));
  std::vector<std::byte> short_frame(9);
  EXPECT_FALSE(parse_request_header(short_frame));
}

}  // namespace
}  // namespace brokerd::net
