#pragma once
// Says whether a repeated warning about one peer may be logged now: at most once per
// interval per peer, so a misconfigured node retrying every few milliseconds gives one line
// every ten seconds, not thousands. Thread-safe.
#include <cstdint>
#include <map>
#include <mutex>

namespace brokerd::quorum {

class RateLimitedLog {
 public:
  explicit RateLimitedLog(int64_t interval_ms = 10000) : interval_ms_(interval_ms) {}
  bool allow(int32_t peer, int64_t now_ms) {
    std::lock_guard lock(mu_);
    auto [it, fresh] = last_.try_emplace(peer, now_ms);
    if (!fresh && now_ms - it->second < interval_ms_) return false;
    it->second = now_ms;
    return true;
  }

 private:
  const int64_t interval_ms_;
  std::mutex mu_;
  std::map<int32_t, int64_t> last_;
};

}  // namespace brokerd::quorum
