#pragma once
// The byte rates of client buckets, measured as Kafka measures them, and the throttle time a
// bucket over its quota is given. Shared by every reactor thread (one mutex; a lookup and a
// few additions under it per request).
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace brokerd::quota {

// A rate sampled in `samples` windows of `sample_ms` (quota.window.num and
// quota.window.size.seconds): the sum of the live samples over the time they cover, at least
// samples-1 windows (so that a new client's first burst is spread over that time).
class Rate {
 public:
  Rate(int samples, int64_t sample_ms);
  void record(double amount, int64_t now_ms);
  double per_second(int64_t now_ms) const;
  // The span the rate is measured over now, in milliseconds.
  int64_t window_ms(int64_t now_ms) const;
  int64_t last_ms() const { return last_ms_; }

 private:
  struct Sample {
    int64_t start_ms = -1;
    double total = 0;
  };
  void expire(int64_t now_ms) const;
  int samples_;
  int64_t sample_ms_;
  mutable std::vector<Sample> ring_;
  size_t current_ = 0;
  int64_t last_ms_ = 0;
};

class Throttler {
 public:
  Throttler(int samples, int64_t sample_ms) : samples_(samples), sample_ms_(sample_ms) {}
  // Records `bytes` for the bucket and returns how long its client must wait for the rate to
  // come back to `quota` bytes/s: (rate - quota) / quota x the window, 0 within the quota.
  int64_t record(const std::string& bucket, double bytes, double quota, int64_t now_ms);
  // Takes back what record() counted (a fetch answered empty because it was throttled).
  void unrecord(const std::string& bucket, double bytes, int64_t now_ms);
  size_t buckets() const;

 private:
  static constexpr int64_t kIdleMs = 3600 * 1000;  // a bucket unused this long is forgotten
  int samples_;
  int64_t sample_ms_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Rate> rates_;
  int64_t next_sweep_ms_ = 0;
};

}  // namespace brokerd::quota
