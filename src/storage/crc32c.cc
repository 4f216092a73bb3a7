#include "brokerd/storage/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace brokerd::storage {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli polynomial

// Slicing-by-8 tables: table[k][b] is the CRC of byte b followed by k zero bytes.
struct Tables {
  std::array<std::array<uint32_t, 256>, 8> t{};
  constexpr Tables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1) ? kPoly : 0);
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int k = 1; k < 8; ++k) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFF];
  }
};
constexpr Tables kTables;

uint32_t update_portable(uint32_t c, const uint8_t* p, size_t n) {
  const auto& t = kTables.t;
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);  // little-endian host assumed (x86-64, aarch64)
    w ^= c;
    c = t[7][w & 0xFF] ^ t[6][(w >> 8) & 0xFF] ^ t[5][(w >> 16) & 0xFF] ^ t[4][(w >> 24) & 0xFF] ^
        t[3][(w >> 32) & 0xFF] ^ t[2][(w >> 40) & 0xFF] ^ t[1][(w >> 48) & 0xFF] ^ t[0][w >> 56];
    p += 8;
    n -= 8;
  }
  while (n--) c = (c >> 8) ^ t[0][(c ^ *p++) & 0xFF];
  return c;
}

#if defined(__x86_64__)
// Multiplies a CRC state by x^(8*len) mod P, i.e. appends `len` zero bytes, by GF(2) matrix
// squaring; used once per block length to merge the three interleaved streams.
using Matrix = std::array<uint32_t, 32>;

uint32_t mat_times(const Matrix& m, uint32_t v) {
  uint32_t r = 0;
  for (int i = 0; v; ++i, v >>= 1)
    if (v & 1) r ^= m[i];
  return r;
}
Matrix mat_square(const Matrix& m) {
  Matrix r{};
  for (int i = 0; i < 32; ++i) r[i] = mat_times(m, m[i]);
  return r;
}
// Table of 4x256 entries: shift[k][b] = (b << 8k) advanced by `len` zero bytes.
struct ShiftTable {
  std::array<std::array<uint32_t, 256>, 4> t{};
  explicit ShiftTable(size_t len) {
    Matrix odd{};  // operator for one zero bit
    odd[0] = kPoly;
    for (int i = 1; i < 32; ++i) odd[i] = 1u << (i - 1);
    Matrix even = mat_square(odd);  // 2 bits
    odd = mat_square(even);         // 4 bits
    even = mat_square(odd);         // 8 bits = 1 byte
    Matrix result{};
    for (int i = 0; i < 32; ++i) result[i] = 1u << i;  // identity
    Matrix power = even;
    for (size_t n = len; n; n >>= 1) {
      if (n & 1) {
        Matrix r{};
        for (int i = 0; i < 32; ++i) r[i] = mat_times(power, result[i]);
        result = r;
      }
      power = mat_square(power);
    }
    for (int k = 0; k < 4; ++k)
      for (uint32_t b = 0; b < 256; ++b) t[k][b] = mat_times(result, b << (8 * k));
  }
  uint32_t shift(uint32_t c) const {
    return t[0][c & 0xFF] ^ t[1][(c >> 8) & 0xFF] ^ t[2][(c >> 16) & 0xFF] ^ t[3][c >> 24];
  }
};

constexpr size_t kLongBlock = 8192;  // bytes per stream per round
constexpr size_t kShortBlock = 256;

const ShiftTable& long_shift() {
  static const ShiftTable t(kLongBlock);
  return t;
}
const ShiftTable& short_shift() {
  static const ShiftTable t(kShortBlock);
  return t;
}

// Three independent streams hide the 3-cycle latency of the crc32 instruction; the
// partial CRCs are merged by shifting each over the bytes that follow it.
__attribute__((target("sse4.2"))) uint64_t three_streams(uint64_t c0, const uint8_t*& p, size_t& n, size_t block,
                                                         const ShiftTable& st) {
  while (n >= 3 * block) {
    uint64_t c1 = 0, c2 = 0;
    const uint8_t* p1 = p + block;
    const uint8_t* p2 = p + 2 * block;
    for (size_t i = 0; i < block; i += 8) {
      uint64_t w0, w1, w2;
      std::memcpy(&w0, p + i, 8);
      std::memcpy(&w1, p1 + i, 8);
      std::memcpy(&w2, p2 + i, 8);
      c0 = _mm_crc32_u64(c0, w0);
      c1 = _mm_crc32_u64(c1, w1);
      c2 = _mm_crc32_u64(c2, w2);
    }
    uint32_t m = st.shift(static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c1);
    c0 = st.shift(m) ^ static_cast<uint32_t>(c2);
    p += 3 * block;
    n -= 3 * block;
  }
  return c0;
}

__attribute__((target("sse4.2"))) uint32_t update_sse42(uint32_t c, const uint8_t* p, size_t n) {
  uint64_t c0 = c;
  // Align to 8 bytes.
  while (n && (reinterpret_cast<uintptr_t>(p) & 7)) {
    c0 = _mm_crc32_u8(static_cast<uint32_t>(c0), *p++);
    --n;
  }
  c0 = three_streams(c0, p, n, kLongBlock, long_shift());
  c0 = three_streams(c0, p, n, kShortBlock, short_shift());
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    c0 = _mm_crc32_u64(c0, w);
    p += 8;
    n -= 8;
  }
  while (n--) c0 = _mm_crc32_u8(static_cast<uint32_t>(c0), *p++);
  return static_cast<uint32_t>(c0);
}

bool has_sse42() {
  static const bool v = __builtin_cpu_supports("sse4.2");
  return v;
}
#endif

}  // namespace

uint32_t crc32c_extend_portable(uint32_t crc, const void* data, size_t size) {
  return ~update_portable(~crc, static_cast<const uint8_t*>(data), size);
}

uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size) {
#if defined(__x86_64__)
  if (has_sse42()) return ~update_sse42(~crc, static_cast<const uint8_t*>(data), size);
#endif
  return crc32c_extend_portable(crc, data, size);
}

bool crc32c_hardware_accelerated() {
#if defined(__x86_64__)
  return has_sse42();
#else
  return false;
#endif
}

}  // namespace brokerd::storage
