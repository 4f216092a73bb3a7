#pragma once
// Kafka's replication throttle, used while a reassignment copies partitions to new brokers so
// that the copy does not crowd out producers and in-sync followers. A topic lists the replicas
// to throttle ("*" or partition:broker entries): leader.replication.throttled.replicas on the
// brokers that send, follower.replication.throttled.replicas on those that fetch. A node
// throttles only replicas out of the ISR, and only while its rate for that side
// (leader/follower.replication.throttled.rate, bytes per second) is spent: the leader then
// answers such a follower without data, and the follower leaves such partitions out of its
// fetches.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string_view>

namespace brokerd::partitions {

// Whether a throttled-replicas list names partition `partition` on broker `broker`.
bool throttles(std::string_view list, int32_t partition, int32_t broker);

// A rate in bytes per second, as a bucket holding up to one second's worth. Thread-safe.
class ReplicationQuota {
 public:
  explicit ReplicationQuota(int64_t bytes_per_second);
  bool unlimited() const { return rate_.load(std::memory_order_relaxed) == INT64_MAX; }
  // A dynamic broker config changed the rate; the bucket holds at most a second of the new one.
  void set_rate(int64_t bytes_per_second);
  // The bucket is empty: throttled replicas wait.
  bool exceeded(int64_t now_ms);
  void record(uint64_t bytes, int64_t now_ms);

 private:
  void refill(int64_t now_ms);

  std::atomic<int64_t> rate_;
  std::mutex mu_;
  double tokens_;
  int64_t last_ms_ = -1;
};

}  // namespace brokerd::partitions
