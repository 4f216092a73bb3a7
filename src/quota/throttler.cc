#include "brokerd/quota/throttler.h"

#include <algorithm>

namespace brokerd::quota {

Rate::Rate(int samples, int64_t sample_ms)
    : samples_(std::max(samples, 2)), sample_ms_(std::max<int64_t>(sample_ms, 1)), ring_(static_cast<size_t>(samples_)) {}

void Rate::expire(int64_t now_ms) const {
  const int64_t horizon = now_ms - static_cast<int64_t>(samples_) * sample_ms_;
  for (auto& s : ring_)
    if (s.start_ms >= 0 && s.start_ms <= horizon) s = Sample{};
}

void Rate::record(double amount, int64_t now_ms) {
  expire(now_ms);
  Sample* cur = &ring_[current_];
  if (cur->start_ms < 0 || now_ms >= cur->start_ms + sample_ms_) {
    current_ = (current_ + 1) % ring_.size();
    cur = &ring_[current_];
    *cur = Sample{now_ms, 0};
  }
  cur->total += amount;
  last_ms_ = now_ms;
}

int64_t Rate::window_ms(int64_t now_ms) const {
  int64_t oldest = now_ms;
  for (const auto& s : ring_)
    if (s.start_ms >= 0) oldest = std::min(oldest, s.start_ms);
  return std::max(now_ms - oldest, static_cast<int64_t>(samples_ - 1) * sample_ms_);
}

double Rate::per_second(int64_t now_ms) const {
  expire(now_ms);
  double total = 0;
  for (const auto& s : ring_) total += s.total;
  return total * 1000.0 / static_cast<double>(window_ms(now_ms));
}

int64_t Throttler::record(const std::string& bucket, double bytes, double quota, int64_t now_ms) {
  std::lock_guard lock(mu_);
  if (now_ms >= next_sweep_ms_) {
    std::erase_if(rates_, [&](const auto& kv) { return now_ms - kv.second.last_ms() > kIdleMs; });
    next_sweep_ms_ = now_ms + 60'000;
  }
  auto it = rates_.try_emplace(bucket, samples_, sample_ms_).first;
  it->second.record(bytes, now_ms);
  const double rate = it->second.per_second(now_ms);
  if (quota <= 0 || rate <= quota) return 0;
  const double ms = (rate - quota) / quota * static_cast<double>(it->second.window_ms(now_ms));
  return std::min(static_cast<int64_t>(ms), static_cast<int64_t>(samples_) * sample_ms_);
}

void Throttler::unrecord(const std::string& bucket, double bytes, int64_t now_ms) {
  std::lock_guard lock(mu_);
  if (auto it = rates_.find(bucket); it != rates_.end()) it->second.record(-bytes, now_ms);
}

size_t Throttler::buckets() const {
  std::lock_guard lock(mu_);
  return rates_.size();
}

}  // namespace brokerd::quota
