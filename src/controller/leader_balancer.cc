#include "brokerd/controller/leader_balancer.h"

#include <chrono>
#include <exception>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/common/logger.h"

namespace brokerd::controller {

LeaderBalancer::LeaderBalancer(metadata::MetadataStore& metadata, int64_t interval_ms, int32_t imbalance_percent)
    : metadata_(metadata), interval_ms_(interval_ms), imbalance_percent_(imbalance_percent) {}

LeaderBalancer::~LeaderBalancer() { stop(); }

void LeaderBalancer::start() {
  thread_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, std::chrono::milliseconds(interval_ms_), [this] { return stopping_; })) {
      lock.unlock();
      try {
        metadata_.rebalance_leaders(imbalance_percent_);  // nothing unless this node leads the quorum
      } catch (const std::exception& e) {
        module_logger("controller")->error("leader balance check failed: {}", e.what());
      }
      lock.lock();
    }
  });
}

void LeaderBalancer::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace brokerd::controller
