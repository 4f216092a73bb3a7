#pragma once
// Every fetch parked on this node. Stopping the node wakes them all at once, so each long
// poll answers with what it has instead of holding the shutdown for its max_wait_ms, and
// no suspended fetch outlives the objects it uses.
#include <boost/asio/any_io_executor.hpp>

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_set>

#include "brokerd/partitions/fetch_waiter.h"

namespace brokerd::partitions {

class FetchPurgatory {
 public:
  FetchPurgatory() = default;
  FetchPurgatory(const FetchPurgatory&) = delete;
  FetchPurgatory& operator=(const FetchPurgatory&) = delete;

  // A waiter for a fetch about to park on `ex`. After stop() it comes already woken.
  std::shared_ptr<FetchWaiter> waiter(boost::asio::any_io_executor ex);
  // Wakes every waiter handed out, and makes later ones woken from the start. Safe from
  // any thread; idempotent.
  void stop();
  bool stopped() const { return stopped_.load(); }
  // Waiters alive now (parked or about to park).
  size_t size() const;

 private:
  friend class FetchWaiter;
  void forget(FetchWaiter* w);

  mutable std::mutex mu_;
  std::unordered_set<FetchWaiter*> waiters_;
  std::atomic<bool> stopped_{false};
};

}  // namespace brokerd::partitions
