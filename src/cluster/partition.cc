#include "brokerd/cluster/partition.h"

namespace brokerd::cluster {

storage::AppendResult Partition::append(std::span<std::byte> batches, int64_t now_ms, storage::AppendOrigin origin) {
  auto result = log_->append(batches, leader_epoch(), now_ms, origin);
  if (result.error == protocol::ErrorCode::none && !result.duplicate) wake_waiters();
  return result;
}

void Partition::wake_waiters() {
  for (auto& w : waiters_)
    if (auto waiter = w.lock()) waiter->wake();
  waiters_.clear();
}

void Partition::set_leadership(int32_t leader, int32_t leader_epoch, bool is_self) {
  const bool changed = leader != leader_ || leader_epoch != leader_epoch_;
  leader_ = leader;
  leader_epoch_ = leader_epoch;
  is_leader_ = is_self;
  if (changed) wake_waiters();
}

void Partition::watch(const std::shared_ptr<FetchWaiter>& w, int64_t seen_end) {
  if (high_watermark() > seen_end) {
    w->wake();
    return;
  }
  // Drop waiters that are gone, so an idle partition polled by many fetches stays small.
  std::erase_if(waiters_, [](const std::weak_ptr<FetchWaiter>& x) { return x.expired(); });
  waiters_.push_back(w);
}

}  // namespace brokerd::cluster
