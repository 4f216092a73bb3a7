#include "brokerd/partitions/fetch_purgatory.h"

#include <vector>

namespace brokerd::partitions {

std::shared_ptr<FetchWaiter> FetchPurgatory::waiter(boost::asio::any_io_executor ex) {
  auto w = std::make_shared<FetchWaiter>(std::move(ex), this);
  std::lock_guard lock(mu_);
  waiters_.insert(w.get());
  if (stopped_.load()) w->wake();
  return w;
}

void FetchPurgatory::stop() {
  std::vector<std::shared_ptr<FetchWaiter>> wake;
  {
    std::lock_guard lock(mu_);
    stopped_.store(true);
    wake.reserve(waiters_.size());
    // A waiter whose last owner is gone may be in its destructor, waiting for this lock:
    // weak_from_this() then yields nothing and it is skipped.
    for (FetchWaiter* w : waiters_)
      if (auto s = w->weak_from_this().lock()) wake.push_back(std::move(s));
  }
  for (auto& w : wake) w->wake();
}

size_t FetchPurgatory::size() const {
  std::lock_guard lock(mu_);
  return waiters_.size();
}

void FetchPurgatory::forget(FetchWaiter* w) {
  std::lock_guard lock(mu_);
  waiters_.erase(w);
}

}  // namespace brokerd::partitions
