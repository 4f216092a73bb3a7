#pragma once
// Kafka's automatic leader balance (auto.leader.rebalance.enable): while this node is the
// active controller, every leader.imbalance.check.interval.seconds it gives partitions back
// to their preferred replicas (the first of each replica list) for every broker whose share
// of not-led preferred partitions passes leader.imbalance.per.broker.percentage. After a
// broker restarts, this is what returns its leaderships.
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace brokerd::metadata {
class MetadataStore;
}  // namespace brokerd::metadata

namespace brokerd::controller {

class LeaderBalancer {
 public:
  LeaderBalancer(metadata::MetadataStore& metadata, int64_t interval_ms, int32_t imbalance_percent);
  ~LeaderBalancer();  // stop()
  LeaderBalancer(const LeaderBalancer&) = delete;
  LeaderBalancer& operator=(const LeaderBalancer&) = delete;

  // The check loop, on a thread of its own (elections commit to the quorum).
  void start();
  void stop();

 private:
  metadata::MetadataStore& metadata_;
  const int64_t interval_ms_;
  const int32_t imbalance_percent_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace brokerd::controller
