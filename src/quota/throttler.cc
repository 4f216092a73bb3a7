#include "brokerd/quota/throttler.h"

#include <algorithm>

namespace brokerd::quota {

void Throttler::refill(Bucket& b, double quota, int64_t now_ms) const {
  const double burst = quota * static_cast<double>(window_ms_) / 1000.0;
  if (b.quota <= 0) {
    b.tokens = burst;  // a new bucket starts full
  } else {
    const double elapsed_s = static_cast<double>(std::max<int64_t>(now_ms - b.at_ms, 0)) / 1000.0;
    b.tokens = std::min(burst, b.tokens + elapsed_s * quota);
  }
  b.quota = quota;
  b.at_ms = std::max(b.at_ms, now_ms);
}

int64_t Throttler::wait_ms(double tokens, double quota) const {
  if (tokens >= 0) return 0;
  // Clamped as a double first: a tiny quota makes the wait larger than any integer.
  return static_cast<int64_t>(std::min(-tokens / quota * 1000.0, static_cast<double>(window_ms_)));
}

int64_t Throttler::record(const std::string& bucket, double bytes, double quota, int64_t now_ms) {
  if (quota <= 0) return 0;
  std::lock_guard lock(mu_);
  if (now_ms >= next_sweep_ms_) {
    std::erase_if(buckets_, [&](const auto& kv) { return now_ms - kv.second.at_ms > kIdleMs; });
    next_sweep_ms_ = now_ms + 60'000;
  }
  Bucket& b = buckets_[bucket];
  refill(b, quota, now_ms);
  b.tokens -= bytes;
  return wait_ms(b.tokens, quota);
}

int64_t Throttler::debt_ms(const std::string& bucket, double quota, int64_t now_ms) {
  if (quota <= 0) return 0;
  std::lock_guard lock(mu_);
  auto it = buckets_.find(bucket);
  if (it == buckets_.end()) return 0;
  refill(it->second, quota, now_ms);
  return wait_ms(it->second.tokens, quota);
}

void Throttler::unrecord(const std::string& bucket, double bytes, int64_t now_ms) {
  std::lock_guard lock(mu_);
  if (auto it = buckets_.find(bucket); it != buckets_.end()) it->second.tokens += bytes;
}

size_t Throttler::buckets() const {
  std::lock_guard lock(mu_);
  return buckets_.size();
}

}  // namespace brokerd::quota
