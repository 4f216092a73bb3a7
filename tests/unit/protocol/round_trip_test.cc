// Every enabled message, every valid version: random values survive encode -> decode, the
// re-encoding is byte-identical, and every strict prefix of an encoding is refused.
#include <gtest/gtest.h>

#include <chrono>

#include "brokerd/protocol/messages/random_fill.h"

namespace brokerd::protocol {
namespace {

using testing::RandomSource;

constexpr int kSeedsPerVersion = 25;

template <typename Msg>
Bytes encode_bytes(const Msg& m, int16_t version) {
  Writer w;
  m.encode(w, version);
  return std::move(w).finish_bytes();
}

template <typename Msg>
void round_trip_all_versions(uint64_t& checked) {
  for (int v = Msg::min_version; v <= Msg::max_version; ++v) {
    auto version = static_cast<int16_t>(v);
    for (int seed = 0; seed < kSeedsPerVersion; ++seed) {
      RandomSource rnd(static_cast<uint64_t>(seed) * 7919 + static_cast<uint64_t>(v));
      Msg original;
      fill_random(original, version, rnd);
      Bytes encoded;
      ASSERT_NO_THROW(encoded = encode_bytes(original, version))
          << Msg::schema_name << " v" << v << " seed " << seed;
      auto owner = std::make_shared<Bytes>(encoded);
      Reader r(*owner, owner);
      Msg decoded;
      ASSERT_NO_THROW(decoded.decode(r, version)) << Msg::schema_name << " v" << v;
      EXPECT_EQ(r.remaining(), 0u) << Msg::schema_name << " v" << v;
      EXPECT_TRUE(decoded == original) << Msg::schema_name << " v" << v << " seed " << seed;
      EXPECT_EQ(encode_bytes(decoded, version), encoded) << Msg::schema_name << " v" << v;
      ++checked;
    }
  }
}

TEST(RoundTrip, EveryMessageEveryVersion) {
  uint64_t checked = 0;
  int messages = 0;
  testing::for_each_message([&](auto type) {
    using Msg = typename decltype(type)::type;
    ++messages;
    round_trip_all_versions<Msg>(checked);
  });
  EXPECT_GT(messages, 80);
  RecordProperty("round_trips", static_cast<int>(checked));
  std::printf("round trips checked: %llu over %d messages\n",
              static_cast<unsigned long long>(checked), messages);
}

TEST(RoundTrip, EveryPrefixIsRejected) {
  // Bounded: a few seeds per version; each prefix must throw DecodeError and nothing else.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  uint64_t prefixes = 0;
  testing::for_each_message([&](auto type) {
    using Msg = typename decltype(type)::type;
    for (int v = Msg::min_version; v <= Msg::max_version; ++v) {
      auto version = static_cast<int16_t>(v);
      for (int seed = 0; seed < 3; ++seed) {
        ASSERT_LT(std::chrono::steady_clock::now(), deadline);
        RandomSource rnd(static_cast<uint64_t>(seed) + 1000);
        Msg m;
        fill_random(m, version, rnd);
        Bytes encoded = encode_bytes(m, version);
        for (size_t n = 0; n < encoded.size(); ++n) {
          Reader r(std::span<const std::byte>(encoded.data(), n));
          Msg out;
          EXPECT_THROW(out.decode(r, version), DecodeError)
              << Msg::schema_name << " v" << v << " prefix " << n << " of " << encoded.size();
          ++prefixes;
        }
      }
    }
  });
  std::printf("prefixes checked: %llu\n", static_cast<unsigned long long>(prefixes));
}

TEST(RoundTrip, NonIgnorableFieldInOldVersionIsAnEncodeError) {
  // AllowAutoTopicCreation (v4+, default true, not ignorable) cannot be false in v3.
  MetadataRequest m;
  m.allow_auto_topic_creation = false;
  Writer w;
  EXPECT_THROW(m.encode(w, 3), EncodeError);
  Writer ok;
  m.allow_auto_topic_creation = true;
  EXPECT_NO_THROW(m.encode(ok, 3));
  // Ignorable fields are dropped silently.
  ApiVersionsRequest a;
  a.client_software_name = "x";
  Writer w2;
  EXPECT_NO_THROW(a.encode(w2, 2));
  EXPECT_EQ(w2.size(), 0u);
}

TEST(RoundTrip, NullInNonNullableVersionIsRefused) {
  // Topics is nullable from v1 only.
  MetadataRequest m;
  m.topics = std::nullopt;
  Writer w;
  EXPECT_THROW(m.encode(w, 0), EncodeError);
  Writer w1;
  EXPECT_NO_THROW(m.encode(w1, 1));
  // Decoding a null array in v0 fails.
  Bytes null_v0 = {std::byte{0xff}, std::byte{0xff}, std::byte{0xff}, std::byte{0xff}};
  Reader r(null_v0);
  MetadataRequest out;
  EXPECT_THROW(out.decode(r, 0), DecodeError);
}

}  // namespace
}  // namespace brokerd::protocol
