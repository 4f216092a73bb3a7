#include "brokerd/partitions/replication_throttle.h"

#include <algorithm>
#include <charconv>

namespace brokerd::partitions {

bool throttles(std::string_view list, int32_t partition, int32_t broker) {
  while (!list.empty()) {
    const auto comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item == "*") return true;
    const auto colon = item.find(':');
    int32_t p = -1, b = -1;
    if (colon != std::string_view::npos &&
        std::from_chars(item.data(), item.data() + colon, p).ec == std::errc{} &&
        std::from_chars(item.data() + colon + 1, item.data() + item.size(), b).ec == std::errc{} && p == partition &&
        b == broker)
      return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

ReplicationQuota::ReplicationQuota(int64_t bytes_per_second)
    : rate_(std::max<int64_t>(bytes_per_second, 1)), tokens_(static_cast<double>(rate_)) {}

void ReplicationQuota::set_rate(int64_t bytes_per_second) {
  bytes_per_second = std::max<int64_t>(bytes_per_second, 1);
  std::lock_guard lock(mu_);
  if (rate_.exchange(bytes_per_second) == bytes_per_second) return;
  tokens_ = std::min(tokens_, static_cast<double>(bytes_per_second));
}

void ReplicationQuota::refill(int64_t now_ms) {
  const auto rate = static_cast<double>(rate_.load(std::memory_order_relaxed));
  if (last_ms_ >= 0 && now_ms > last_ms_)
    tokens_ = std::min(rate, tokens_ + rate * static_cast<double>(now_ms - last_ms_) / 1000.0);
  last_ms_ = std::max(last_ms_, now_ms);
}

bool ReplicationQuota::exceeded(int64_t now_ms) {
  if (unlimited()) return false;
  std::lock_guard lock(mu_);
  refill(now_ms);
  return tokens_ <= 0;
}

void ReplicationQuota::record(uint64_t bytes, int64_t now_ms) {
  if (unlimited()) return;
  std::lock_guard lock(mu_);
  refill(now_ms);
  tokens_ -= static_cast<double>(bytes);
}

}  // namespace brokerd::partitions
