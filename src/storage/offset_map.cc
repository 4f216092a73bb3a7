#include "brokerd/storage/offset_map.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace brokerd::storage {
namespace {

constexpr uint64_t kC1 = 0x87c37b91114253d5ULL;
constexpr uint64_t kC2 = 0x4cf5ad432745937fULL;

inline uint64_t fmix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

inline uint64_t load64(const std::byte* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

}  // namespace

KeyHash hash_key(std::span<const std::byte> key) {
  const std::byte* p = key.data();
  const size_t n = key.size();
  uint64_t h1 = 0x9368e53c2f6af274ULL, h2 = 0x586dcd208f7cd3fdULL;  // fixed seeds
  size_t blocks = n / 16;
  for (size_t i = 0; i < blocks; ++i, p += 16) {
    uint64_t k1 = load64(p), k2 = load64(p + 8);
    k1 *= kC1;
    k1 = std::rotl(k1, 31);
    k1 *= kC2;
    h1 ^= k1;
    h1 = std::rotl(h1, 27);
    h1 += h2;
    h1 = h1 * 5 + 0x52dce729;
    k2 *= kC2;
    k2 = std::rotl(k2, 33);
    k2 *= kC1;
    h2 ^= k2;
    h2 = std::rotl(h2, 31);
    h2 += h1;
    h2 = h2 * 5 + 0x38495ab5;
  }
  uint64_t k1 = 0, k2 = 0;
  size_t tail = n & 15;
  for (size_t i = tail; i > 8; --i) k2 |= uint64_t{static_cast<uint8_t>(p[i - 1])} << ((i - 9) * 8);
  for (size_t i = std::min<size_t>(tail, 8); i > 0; --i) k1 |= uint64_t{static_cast<uint8_t>(p[i - 1])} << ((i - 1) * 8);
  if (tail > 8) {
    k2 *= kC2;
    k2 = std::rotl(k2, 33);
    k2 *= kC1;
    h2 ^= k2;
  }
  if (tail > 0) {
    k1 *= kC1;
    k1 = std::rotl(k1, 31);
    k1 *= kC2;
    h1 ^= k1;
  }
  h1 ^= n;
  h2 ^= n;
  h1 += h2;
  h2 += h1;
  h1 = fmix(h1);
  h2 = fmix(h2);
  h1 += h2;
  h2 += h1;
  return KeyHash{h1, h2};
}

OffsetMap::OffsetMap(size_t memory_bytes, double load_factor) {
  // A power of two of slots, so probing masks instead of dividing.
  size_t want = std::max<size_t>(memory_bytes / kSlotBytes, 16);
  size_t n = std::bit_floor(want);
  slots_.assign(n, Slot{0, 0, -1});
  mask_ = n - 1;
  limit_ = std::max<size_t>(1, static_cast<size_t>(static_cast<double>(n) * std::clamp(load_factor, 0.1, 0.95)));
}

size_t OffsetMap::index_of(const KeyHash& h) const {
  size_t i = static_cast<size_t>(h.lo) & mask_;
  while (true) {
    const Slot& s = slots_[i];
    if (s.offset < 0 || (s.lo == h.lo && s.hi == h.hi)) return i;
    i = (i + 1) & mask_;
  }
}

void OffsetMap::put(const KeyHash& h, int64_t offset) {
  Slot& s = slots_[index_of(h)];
  if (s.offset < 0) {
    s.lo = h.lo;
    s.hi = h.hi;
    ++size_;
  }
  s.offset = offset;
  latest_ = std::max(latest_, offset);
}

int64_t OffsetMap::get(const KeyHash& h) const { return slots_[index_of(h)].offset; }

void OffsetMap::clear() {
  std::fill(slots_.begin(), slots_.end(), Slot{0, 0, -1});
  size_ = 0;
  latest_ = -1;
}

}  // namespace brokerd::storage
