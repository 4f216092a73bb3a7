#pragma once
// Zigzag varints of the record format and big-endian fixed-width fields.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "brokerd/common/bytes.h"

namespace brokerd::storage::detail {

inline uint16_t load_be16(const std::byte* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return __builtin_bswap16(v);
}
inline uint32_t load_be32(const std::byte* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return __builtin_bswap32(v);
}
inline uint64_t load_be64(const std::byte* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}
inline void store_be16(std::byte* p, uint16_t v) {
  v = __builtin_bswap16(v);
  std::memcpy(p, &v, 2);
}
inline void store_be32(std::byte* p, uint32_t v) {
  v = __builtin_bswap32(v);
  std::memcpy(p, &v, 4);
}
inline void store_be64(std::byte* p, uint64_t v) {
  v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
}

// Reads a zigzag varlong of at most 10 bytes; false when truncated or overlong.
inline bool read_varlong(const std::byte*& p, const std::byte* end, int64_t& out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (p == end) return false;
    uint8_t b = static_cast<uint8_t>(*p++);
    v |= uint64_t{b & 0x7Fu} << shift;
    if (!(b & 0x80)) {
      out = static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1));
      return true;
    }
  }
  return false;
}

// Reads a zigzag varint of at most 5 bytes.
inline bool read_varint(const std::byte*& p, const std::byte* end, int32_t& out) {
  // Fast path: one byte, the common case for small lengths and deltas.
  if (p != end && !(static_cast<uint8_t>(*p) & 0x80)) {
    uint32_t v = static_cast<uint8_t>(*p++);
    out = static_cast<int32_t>((v >> 1) ^ (~(v & 1) + 1));
    return true;
  }
  uint32_t v = 0;
  for (int shift = 0; shift < 35; shift += 7) {
    if (p == end) return false;
    uint8_t b = static_cast<uint8_t>(*p++);
    if (shift == 28 && (b & 0xF0)) return false;
    v |= uint32_t{b & 0x7Fu} << shift;
    if (!(b & 0x80)) {
      out = static_cast<int32_t>((v >> 1) ^ (~(v & 1) + 1));
      return true;
    }
  }
  return false;
}

inline void write_varlong(Bytes& out, int64_t n) {
  uint64_t v = (static_cast<uint64_t>(n) << 1) ^ static_cast<uint64_t>(n >> 63);
  while (v >= 0x80) {
    out.push_back(static_cast<std::byte>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<std::byte>(v));
}
inline void write_varint(Bytes& out, int32_t n) { write_varlong(out, n); }

inline size_t varlong_size(int64_t n) {
  uint64_t v = (static_cast<uint64_t>(n) << 1) ^ static_cast<uint64_t>(n >> 63);
  size_t s = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++s;
  }
  return s;
}

}  // namespace brokerd::storage::detail
