#include "histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace loadgen {

size_t Histogram::index_of(uint64_t value) {
  if (value < sub_count) return size_t(value);
  // shift >= 1 brings value into [half, sub_count): its top sub_bits bits.
  int shift = std::bit_width(value) - sub_bits;
  if (shift > max_shift) return bucket_count - 1;
  return size_t(sub_count + uint64_t(shift - 1) * half + ((value >> shift) - half));
}

uint64_t Histogram::highest_in(size_t index) {
  if (index < sub_count) return index;
  uint64_t rel = index - sub_count;
  int shift = int(rel / half) + 1;
  uint64_t sub = half + rel % half;
  return ((sub + 1) << shift) - 1;
}

void Histogram::record(uint64_t value) {
  ++_counts[index_of(value)];
  ++_count;
  _sum += value;
  _min = std::min(_min, value);
  _max = std::max(_max, value);
}

void Histogram::merge(const Histogram& other) {
  if (other._count == 0) return;
  for (size_t i = 0; i < bucket_count; ++i) _counts[i] += other._counts[i];
  _count += other._count;
  _sum += other._sum;
  _min = std::min(_min, other._min);
  _max = std::max(_max, other._max);
}

void Histogram::reset() { *this = Histogram{}; }

uint64_t Histogram::percentile(double percent) const {
  if (_count == 0) return 0;
  auto rank = uint64_t(std::ceil(percent / 100.0 * double(_count)));
  rank = std::clamp<uint64_t>(rank, 1, _count);
  uint64_t seen = 0;
  for (size_t i = 0; i < bucket_count; ++i) {
    seen += _counts[i];
    if (seen >= rank) return std::min(highest_in(i), _max);
  }
  return _max;
}

}  // namespace loadgen
