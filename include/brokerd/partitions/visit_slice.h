#pragma once
// Which buckets of a shard's partition map one background tick visits: all of them while the
// shard holds at most `per_tick` partitions, else consecutive slices, so that every bucket is
// visited once every ticks_per_pass ticks (at most max_ticks). No clocks: the caller ticks.
#include <algorithm>
#include <cstddef>

namespace brokerd::partitions {

struct VisitSlice {
  size_t from = 0;  // buckets [from, to)
  size_t to = 0;
  size_t ticks_per_pass = 1;
};

// `cursor` is the first bucket of the next slice, kept by the caller between ticks.
inline VisitSlice next_visit_slice(size_t buckets, size_t partitions, size_t per_tick, size_t max_ticks,
                                   size_t& cursor) {
  VisitSlice s;
  s.ticks_per_pass = std::clamp<size_t>((partitions + per_tick - 1) / std::max<size_t>(per_tick, 1), 1,
                                        std::max<size_t>(max_ticks, 1));
  if (cursor >= buckets) cursor = 0;
  s.from = cursor;
  s.to = s.ticks_per_pass == 1 ? buckets
                               : std::min(buckets, s.from + (buckets + s.ticks_per_pass - 1) / s.ticks_per_pass);
  cursor = s.to >= buckets ? 0 : s.to;
  return s;
}

}  // namespace brokerd::partitions
