#pragma once
// A log-bucketed latency histogram in the manner of HdrHistogram: every power of two is
// split into 64 linear sub-buckets, so a recorded value is kept within 1/64 (1.6%) of its
// true value, with a fixed ~2,200 counters covering 0 .. 2^40 microseconds.
// Not thread-safe: each worker records into its own and the reporter merges.

#include <array>
#include <cstddef>
#include <cstdint>

namespace loadgen {

class Histogram {
public:
  void record(uint64_t value);
  void merge(const Histogram& other);
  void reset();

  uint64_t count() const { return _count; }
  uint64_t max() const { return _max; }
  uint64_t min() const { return _count == 0 ? 0 : _min; }
  double mean() const { return _count == 0 ? 0.0 : double(_sum) / double(_count); }
  // The smallest recorded value v such that at least `percent` of the values are <= v,
  // reported as the top of its bucket and never above the exact maximum. 0 when empty.
  uint64_t percentile(double percent) const;

private:
  static constexpr int sub_bits = 7;                    // 128 exact values below 128
  static constexpr uint64_t sub_count = 1u << sub_bits;  // then 64 sub-buckets per octave
  static constexpr uint64_t half = sub_count / 2;
  static constexpr int max_shift = 34;                   // 2^41 us ~ 25 days
  static constexpr size_t bucket_count = sub_count + max_shift * half;

  static size_t index_of(uint64_t value);
  static uint64_t highest_in(size_t index);

  std::array<uint64_t, bucket_count> _counts{};
  uint64_t _count = 0;
  uint64_t _sum = 0;
  uint64_t _min = UINT64_MAX;
  uint64_t _max = 0;
};

}  // namespace loadgen
