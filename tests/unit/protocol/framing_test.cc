#include "brokerd/protocol/framing.h"

#include <gtest/gtest.h>

#include <set>

#include "brokerd/protocol/messages/api_table.h"
#include "unit/protocol/test_bytes.h"

namespace brokerd::protocol {
namespace {

using test::append;
using test::bytes_of;

TEST(ApiTable, HeaderVersions) {
  EXPECT_EQ(request_header_version(0, 8), 1);   // Produce v8: classic
  EXPECT_EQ(request_header_version(0, 9), 2);   // Produce v9: flexible
  EXPECT_EQ(request_header_version(7, 0), 0);   // ControlledShutdown v0
  EXPECT_EQ(request_header_version(17, 1), 1);  // SaslHandshake: never flexible
  EXPECT_EQ(request_header_version(999, 0), 1); // unknown key
  EXPECT_EQ(response_header_version(18, 3), 0); // ApiVersions: always v0
  EXPECT_EQ(response_header_version(3, 9), 1);
  EXPECT_EQ(response_header_version(3, 8), 0);
}

TEST(ApiTable, RowsAreUniqueAndConsistent) {
  std::set<int16_t> keys;
  for (const auto& a : api_table) {
    EXPECT_TRUE(keys.insert(a.api_key).second) << a.name;
    EXPECT_LE(a.min_version, a.max_stable_version) << a.name;
    EXPECT_LE(a.max_stable_version, a.max_version) << a.name;
    EXPECT_EQ(find_api(a.api_key), &a);
  }
  EXPECT_EQ(api_table.size(), 67u);  // one row per request/response pair in proto/enabled.txt
  EXPECT_EQ(find_api(-5), nullptr);
  EXPECT_EQ(std::string(find_api(0)->name), "Produce");
}

TEST(ApiTable, VisitRequestMapsKeysToTypes) {
  for (const auto& a : api_table) {
    bool matched = visit_request(a.api_key, [&](auto t) {
      using T = typename decltype(t)::type;
      if constexpr (std::is_void_v<T>) {
        return false;
      } else {
        return T::api_key == a.api_key && T::max_version == a.max_version;
      }
    });
    EXPECT_TRUE(matched) << a.name;
    bool response = visit_response(a.api_key, [&](auto t) {
      using T = typename decltype(t)::type;
      if constexpr (std::is_void_v<T>) return false;
      else return T::api_key == a.api_key;
    });
    EXPECT_TRUE(response) << a.name;
  }
  bool unknown = visit_request(12345, [](auto t) {
    return std::is_void_v<typename decltype(t)::type>;
  });
  EXPECT_TRUE(unknown);
}

TEST(Framing, ResponseChunksHaveNoSizePrefix) {
  ApiVersionsResponse resp;
  resp.api_keys.push_back({.api_key = 0, .min_version = 3, .max_version = 11});
  auto chunks = encode_response(18, 3, 42, resp);
  Bytes flat;
  for (const auto& c : chunks) append(flat, std::get<Bytes>(c));
  Bytes expected = bytes_of({0, 0, 0, 42});  // header v0: correlation id only
  append(expected, {0, 0});                  // error code
  append(expected, {0x02, 0, 0, 0, 3, 0, 11, 0x00});
  append(expected, {0, 0, 0, 0, 0x00});      // throttle, tagged fields
  EXPECT_EQ(flat, expected);

  Reader r(flat);
  EXPECT_EQ(decode_response_header(r, 18, 3), 42);
  ApiVersionsResponse decoded;
  decoded.decode(r, 3);
  EXPECT_EQ(decoded, resp);
}

TEST(Framing, FlexibleResponseHeaderHasTags) {
  MetadataResponse m;
  auto chunks = encode_response(3, 9, 7, m);
  const auto& first = std::get<Bytes>(chunks.at(0));
  ASSERT_GE(first.size(), 5u);
  EXPECT_EQ(first[4], std::byte{0});  // empty tagged section after the correlation id
}

TEST(Framing, UnknownApiKeyHeaderIsReadAsV1) {
  Bytes in = bytes_of({0x03, 0xe7, 0x00, 0x05, 0, 0, 0, 9, 0xff, 0xff, 0xaa});
  Reader r(in);
  auto h = decode_request_header(r);
  EXPECT_EQ(h.api_key, 999);
  EXPECT_EQ(h.correlation_id, 9);
  EXPECT_FALSE(h.client_id.has_value());
  EXPECT_EQ(r.remaining(), 1u);
}

TEST(Framing, RequestHeaderV2SkipsUnknownTags) {
  Bytes in = bytes_of({0x00, 0x03, 0x00, 0x0c, 0, 0, 0, 1, 0x00, 0x01, 'c'});
  append(in, {0x01, 0x05, 0x01, 0xee, 0x42});
  Reader r(in);
  auto h = decode_request_header(r);
  EXPECT_EQ(h.api_version, 12);
  EXPECT_EQ(h.client_id, "c");
  EXPECT_EQ(r.i8(), 0x42);
}

}  // namespace
}  // namespace brokerd::protocol
