// The /v1 API's pure parts: where a keyed record goes (Kafka's murmur2, Java's default
// partitioner), the listener setting, the query string, and the status of each Kafka error.
#include <gtest/gtest.h>

#include <string>

#include "brokerd/common/java_hash.h"
#include "brokerd/http/api_server.h"
#include "http/errors.h"
#include "http/route_support.h"

namespace brokerd::http {
namespace {

std::span<const std::byte> bytes(std::string_view s) { return std::as_bytes(std::span<const char>(s.data(), s.size())); }

TEST(Murmur2, MatchesKafkasUtilsMurmur2) {
  // The values Kafka's own tests pin for Utils.murmur2.
  EXPECT_EQ(kafka_murmur2(bytes("21")), -973932308);
  EXPECT_EQ(kafka_murmur2(bytes("foobar")), -790332482);
  EXPECT_EQ(kafka_murmur2(bytes("a-little-bit-long-string")), -985981536);
  EXPECT_EQ(kafka_murmur2(bytes("a-little-bit-longer-string")), -1486304829);
  EXPECT_EQ(kafka_murmur2(bytes("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8")), -58897971);
  EXPECT_EQ(kafka_murmur2(bytes("abc")), 479470107);
}

TEST(Murmur2, DefaultPartitionIsPositiveModuloTheCount) {
  // -790332482 & 0x7fffffff = 1357151166; % 7 = 1357151166 - 7*193878738 = 0.
  EXPECT_EQ(default_partition(bytes("foobar"), 7), 1357151166 % 7);
  for (int n = 1; n < 50; ++n) {
    const int32_t p = default_partition(bytes("key-" + std::to_string(n)), n);
    EXPECT_GE(p, 0);
    EXPECT_LT(p, n);
  }
}

TEST(HttpListeners, ParsesAListAndRefusesWhatIsNotHttp) {
  auto l = parse_http_listeners("http://127.0.0.1:8080, http://[::1]:0");
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0].host, "127.0.0.1");
  EXPECT_EQ(l[0].port, 8080);
  EXPECT_EQ(l[1].host, "::1");
  EXPECT_EQ(l[1].port, 0);
  EXPECT_TRUE(parse_http_listeners("").empty());
  EXPECT_THROW(parse_http_listeners("127.0.0.1:80"), std::invalid_argument);
  EXPECT_THROW(parse_http_listeners("ftp://h:1"), std::invalid_argument);
  auto s = parse_http_listeners("https://0.0.0.0:8443");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(s[0].https);
  EXPECT_FALSE(l[0].https);
  EXPECT_THROW(parse_http_listeners("http://h:99999"), std::invalid_argument);
  EXPECT_THROW(parse_http_listeners("http://h"), std::invalid_argument);
}

TEST(Query, DecodesParametersAndChecksIntegers) {
  auto q = parse_query("offset=12&encoding=base64&group=a%2Fb+c");
  ASSERT_TRUE(q);
  std::string error;
  EXPECT_EQ(q->integer("offset", 0, 100, error), 12);
  EXPECT_EQ(q->text("encoding"), "base64");
  EXPECT_EQ(q->text("group"), "a/b c");
  EXPECT_EQ(q->integer("missing", 0, 1, error), std::nullopt);
  EXPECT_TRUE(error.empty());
  EXPECT_EQ(q->integer("offset", 0, 5, error), std::nullopt);
  EXPECT_NE(error.find("offset"), std::string::npos);
  EXPECT_FALSE(parse_query("a=%zz"));
  EXPECT_FALSE(parse_query("a=%2"));
  EXPECT_EQ(percent_decode("x%41y"), "xAy");
}

TEST(Errors, StatusesFollowTheContract) {
  EXPECT_EQ(status_of(ErrorCode::invalid_partitions), 400u);
  EXPECT_EQ(status_of(ErrorCode::topic_authorization_failed), 403u);
  EXPECT_EQ(status_of(ErrorCode::policy_violation), 403u);
  EXPECT_EQ(status_of(ErrorCode::unknown_topic_or_partition), 404u);
  EXPECT_EQ(status_of(ErrorCode::group_id_not_found), 404u);
  EXPECT_EQ(status_of(ErrorCode::topic_already_exists), 409u);
  EXPECT_EQ(status_of(ErrorCode::illegal_generation), 409u);
  EXPECT_EQ(status_of(ErrorCode::message_too_large), 413u);
  EXPECT_EQ(status_of(ErrorCode::offset_out_of_range), 416u);
  EXPECT_EQ(status_of(ErrorCode::throttling_quota_exceeded), 429u);
  EXPECT_EQ(status_of(ErrorCode::not_leader_or_follower), 503u);
  EXPECT_EQ(json_error_name(ErrorCode::offset_out_of_range), "offset_out_of_range");
  auto r = error_reply(ErrorCode::not_enough_replicas, "two copies missing");
  EXPECT_EQ(r.status, 503u);
  ASSERT_EQ(r.headers.size(), 1u);
  EXPECT_EQ(r.headers[0].first, "Retry-After");
  EXPECT_NE(r.body.find("\"error\":\"not_enough_replicas\""), std::string::npos);
  EXPECT_NE(r.body.find("\"error_code\":19"), std::string::npos);
}

}  // namespace
}  // namespace brokerd::http
