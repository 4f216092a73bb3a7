#include "brokerd/cluster/partition.h"

namespace brokerd::cluster {

storage::AppendResult Partition::append(std::span<std::byte> batches, int64_t now_ms, storage::AppendOrigin origin) {
  auto result = log_->append(batches, leader_epoch(), now_ms, origin);
  if (result.error == protocol::ErrorCode::none && !result.duplicate && !waiters_.empty()) {
    for (auto& w : waiters_)
      if (auto waiter = w.lock()) waiter->wake();
    waiters_.clear();
  }
  return result;
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
