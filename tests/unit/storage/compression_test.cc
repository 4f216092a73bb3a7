#include "brokerd/storage/compression.h"

#include <snappy.h>
#include <gtest/gtest.h>

#include <random>

namespace brokerd::storage {
namespace {

Bytes sample(size_t n) {
  Bytes b(n);
  std::mt19937 rng(7);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<std::byte>(i % 97 < 50 ? 'a' + i % 7 : rng() & 0xFF);
  return b;
}

class CodecTest : public ::testing::TestWithParam<Compression> {};

TEST_P(CodecTest, RoundTrip) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{1000}, size_t{100000}, size_t{300000}}) {
    Bytes in = sample(n), packed, out;
    ASSERT_TRUE(compress(GetParam(), in, packed));
    ASSERT_EQ(decompress(GetParam(), packed, 1 << 20, out), DecompressStatus::ok) << n;
    EXPECT_EQ(out, in);
  }
}

TEST_P(CodecTest, OutputIsBounded) {
  Bytes in(1 << 20, std::byte{'z'}), packed, out;
  ASSERT_TRUE(compress(GetParam(), in, packed));
  EXPECT_EQ(decompress(GetParam(), packed, 4096, out), DecompressStatus::too_large);
  EXPECT_TRUE(out.empty());
}

TEST_P(CodecTest, GarbageAndTruncationAreCorrupt) {
  if (GetParam() == Compression::none) GTEST_SKIP();
  Bytes in = sample(50000), packed, out;
  ASSERT_TRUE(compress(GetParam(), in, packed));
  Bytes cut(packed.begin(), packed.begin() + packed.size() / 2);
  EXPECT_NE(decompress(GetParam(), cut, 1 << 20, out), DecompressStatus::ok);
  Bytes garbage(200, std::byte{0x5A});
  out.clear();
  EXPECT_NE(decompress(GetParam(), garbage, 1 << 20, out), DecompressStatus::ok);
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, CodecTest,
                         ::testing::Values(Compression::none, Compression::gzip, Compression::snappy,
                                           Compression::lz4, Compression::zstd),
                         [](const auto& info) { return std::string(compression_name(info.param)); });

TEST(Compression, SnappyWritesXerialFraming) {
  Bytes in = sample(100000), packed;
  ASSERT_TRUE(compress(Compression::snappy, in, packed));
  ASSERT_GT(packed.size(), 16u);
  EXPECT_EQ(packed[0], std::byte{0x82});
  EXPECT_EQ(packed[1], std::byte{'S'});
}

TEST(Compression, SnappyReadsRawBlocks) {
  Bytes in = sample(10000);
  std::string raw;
  snappy::Compress(reinterpret_cast<const char*>(in.data()), in.size(), &raw);
  Bytes out;
  ASSERT_EQ(decompress(Compression::snappy, std::as_bytes(std::span(raw.data(), raw.size())), 1 << 20, out),
            DecompressStatus::ok);
  EXPECT_EQ(out, in);
}

TEST(Compression, UnknownCodecIsUnsupported) {
  Bytes out;
  EXPECT_EQ(decompress(static_cast<Compression>(6), Bytes(4), 100, out), DecompressStatus::unsupported);
}

}  // namespace
}  // namespace brokerd::storage
