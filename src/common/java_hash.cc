#include "brokerd/common/java_hash.h"

namespace brokerd {
namespace {

// The code point starting at s[i] (UTF-8), and i moved past it; a malformed byte is itself.
uint32_t next_code_point(std::string_view s, size_t& i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]) & 0x3Fu; };
  auto c = static_cast<unsigned char>(s[i]);
  if (c >= 0xF0 && i + 3 < s.size()) {
    uint32_t cp = ((c & 0x07u) << 18) | (byte(i + 1) << 12) | (byte(i + 2) << 6) | byte(i + 3);
    i += 4;
    return cp;
  }
  if (c >= 0xE0 && i + 2 < s.size()) {
    uint32_t cp = ((c & 0x0Fu) << 12) | (byte(i + 1) << 6) | byte(i + 2);
    i += 3;
    return cp;
  }
  if (c >= 0xC0 && i + 1 < s.size()) {
    uint32_t cp = ((c & 0x1Fu) << 6) | byte(i + 1);
    i += 2;
    return cp;
  }
  i += 1;
  return c;
}

}  // namespace

int32_t java_string_hash(std::string_view s) {
  uint32_t h = 0;
  auto mix = [&](uint32_t unit) { h = 31 * h + unit; };
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = next_code_point(s, i);
    if (cp > 0xFFFF) {  // a surrogate pair in UTF-16
      cp -= 0x10000;
      mix(0xD800 + (cp >> 10));
      mix(0xDC00 + (cp & 0x3FF));
    } else {
      mix(cp);
    }
  }
  return static_cast<int32_t>(h);
}

int32_t kafka_murmur2(std::span<const std::byte> key) {
  constexpr uint32_t m = 0x5bd1e995;
  constexpr int r = 24;
  const auto* data = reinterpret_cast<const unsigned char*>(key.data());
  const size_t length = key.size();
  uint32_t h = 0x9747b28cu ^ static_cast<uint32_t>(length);
  const size_t words = length / 4;
  for (size_t i = 0; i < words; ++i) {
    const size_t at = i * 4;
    uint32_t k = uint32_t(data[at]) | (uint32_t(data[at + 1]) << 8) | (uint32_t(data[at + 2]) << 16) |
                 (uint32_t(data[at + 3]) << 24);
    k *= m;
    k ^= k >> r;
    k *= m;
    h *= m;
    h ^= k;
  }
  const size_t tail = words * 4;
  switch (length % 4) {
    case 3: h ^= uint32_t(data[tail + 2]) << 16; [[fallthrough]];
    case 2: h ^= uint32_t(data[tail + 1]) << 8; [[fallthrough]];
    case 1:
      h ^= uint32_t(data[tail]);
      h *= m;
  }
  h ^= h >> 13;
  h *= m;
  h ^= h >> 15;
  return static_cast<int32_t>(h);
}

}  // namespace brokerd
