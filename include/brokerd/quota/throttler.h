#pragma once
// The byte rates of client buckets and the throttle time a bucket over its quota is given.
// Each bucket is a token bucket: it fills at the quota's rate up to a burst of the whole
// quota window (quota.window.num x quota.window.size.seconds, the burst Kafka's sampled rate
// allows), every request takes its bytes, and a bucket in debt makes its client wait until
// the debt is paid. Unlike a sampled rate, no burst is forgotten when a sample expires, so
// the long-run rate is the quota. Shared by every reactor thread (one mutex; a lookup and a
// few operations under it per request).
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace brokerd::quota {

class Throttler {
 public:
  Throttler(int samples, int64_t sample_ms) : window_ms_(static_cast<int64_t>(samples) * sample_ms) {}
  // Takes `bytes` from the bucket (created full) filled at `quota` bytes/s, and returns how
  // long its client must wait for the bucket to be out of debt: 0 within the quota; at most
  // the window (a larger debt is paid by the next requests' waits).
  int64_t record(const std::string& bucket, double bytes, double quota, int64_t now_ms);
  // How long the bucket is in debt for (0 when it is not), taking nothing.
  int64_t debt_ms(const std::string& bucket, double quota, int64_t now_ms);
  // Gives back what record() took.
  void unrecord(const std::string& bucket, double bytes, int64_t now_ms);
  size_t buckets() const;

 private:
  struct Bucket {
    double tokens = 0;
    double quota = 0;
    int64_t at_ms = 0;
  };
  void refill(Bucket& b, double quota, int64_t now_ms) const;
  // The wait that pays a debt of -tokens at `quota`, at most the window.
  int64_t wait_ms(double tokens, double quota) const;
  static constexpr int64_t kIdleMs = 3600 * 1000;  // a bucket unused this long is forgotten
  int64_t window_ms_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_;
  int64_t next_sweep_ms_ = 0;
};

}  // namespace brokerd::quota
