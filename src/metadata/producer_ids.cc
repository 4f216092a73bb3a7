#include "brokerd/metadata/producer_ids.h"

#include <algorithm>

namespace brokerd::metadata {

using protocol::ErrorCode;

int64_t ProducerIdManager::next_id() {
  if (next_ >= block_.end()) {
    block_ = allocate_();
    next_ = block_.first;
  }
  return next_++;
}

int64_t ProducerIdManager::next() {
  std::lock_guard lock(mu_);
  return next_id();
}

ProducerIdManager::Result ProducerIdManager::init(int64_t producer_id, int16_t epoch, int64_t now_ms,
                                                  int64_t expiration_ms) {
  std::lock_guard lock(mu_);
  if (now_ms - last_sweep_ms_ >= std::min<int64_t>(expiration_ms, 60000)) {
    last_sweep_ms_ = now_ms;
    std::erase_if(issued_, [&](const auto& kv) { return now_ms - kv.second.at_ms >= expiration_ms; });
  }
  if (issued_.size() > kMaxTracked) {
    // Bounded memory under producer churn: forgetting an id only means its next bump is
    // taken on trust, as after a restart.
    std::erase_if(issued_, [&](const auto& kv) { return now_ms - kv.second.at_ms >= 600000; });
  }
  Result r;
  if (producer_id >= 0) {
    auto it = issued_.find(producer_id);
    if (it != issued_.end()) {
      int16_t current = it->second.epoch;
      if (epoch == current - 1) {
        // A retry of the bump that gave `current`: same answer, no second bump.
        it->second.at_ms = now_ms;
        return Result{ErrorCode::none, producer_id, current};
      }
      if (epoch != current) return Result{ErrorCode::producer_fenced, -1, -1};
    }
    // The current epoch (or an id this node no longer tracks, e.g. after a restart): bump.
    if (epoch < kMaxEpoch) {
      r.producer_id = producer_id;
      r.epoch = static_cast<int16_t>(epoch + 1);
      issued_[producer_id] = Issued{r.epoch, now_ms};
      return r;
    }
    issued_.erase(producer_id);
  }
  r.producer_id = next_id();
  r.epoch = 0;
  issued_[r.producer_id] = Issued{0, now_ms};
  return r;
}

}  // namespace brokerd::metadata
