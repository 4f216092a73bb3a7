#include "brokerd/storage/crc32c.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace brokerd::storage {
namespace {

TEST(Crc32c, KnownAnswers) {
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
  std::vector<uint8_t> buf(32, 0);
  EXPECT_EQ(crc32c(buf.data(), buf.size()), 0x8A9136AAu);  // RFC 3720 B.4: zeros
  std::fill(buf.begin(), buf.end(), 0xFF);
  EXPECT_EQ(crc32c(buf.data(), buf.size()), 0x62A8AB43u);  // ones
  for (int i = 0; i < 32; ++i) buf[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(crc32c(buf.data(), buf.size()), 0x46DD794Eu);  // incrementing
  for (int i = 0; i < 32; ++i) buf[i] = static_cast<uint8_t>(31 - i);
  EXPECT_EQ(crc32c(buf.data(), buf.size()), 0x113FDB5Cu);  // decrementing
  EXPECT_EQ(crc32c(nullptr, 0), 0u);
}

TEST(Crc32c, PortableMatchesKnownAnswer) {
  EXPECT_EQ(crc32c_extend_portable(0, "123456789", 9), 0xE3069283u);
}

TEST(Crc32c, HardwareMatchesPortableAtAllSizesAndAlignments) {
  std::mt19937 rng(42);
  std::vector<uint8_t> data(200000);
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  // Sizes around the three-stream block boundaries (3*256, 3*8192) and odd tails.
  std::vector<size_t> sizes = {0, 1, 7, 8, 9, 63, 767, 768, 769, 1024, 24575, 24576, 24577, 65536, 199990};
  for (size_t size : sizes) {
    for (size_t align = 0; align < 8; ++align) {
      ASSERT_EQ(crc32c(data.data() + align, size), crc32c_extend_portable(0, data.data() + align, size))
          << "size " << size << " align " << align;
    }
  }
}

TEST(Crc32c, ExtendEqualsWhole) {
  std::string s(100000, 'x');
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<char>(i * 31);
  uint32_t whole = crc32c(s.data(), s.size());
  uint32_t part = crc32c_extend(crc32c(s.data(), 12345), s.data() + 12345, s.size() - 12345);
  EXPECT_EQ(whole, part);
}

}  // namespace
}  // namespace brokerd::storage
