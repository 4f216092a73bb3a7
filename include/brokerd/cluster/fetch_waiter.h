#pragma once
// A fetch parked in the purgatory: it waits on its connection's executor until a partition
// it reads receives data (wake(), from any shard) or its max_wait_ms runs out.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <memory>

namespace brokerd::cluster {

class FetchWaiter : public std::enable_shared_from_this<FetchWaiter> {
 public:
  explicit FetchWaiter(boost::asio::any_io_executor ex) : timer_(ex) {}
  // Safe from any thread; wakes the waiting fetch once. Hold the waiter in a shared_ptr.
  void wake();
  // Returns when woken or at `deadline`, whichever is first. Call on the waiter's executor.
  boost::asio::awaitable<void> wait_until(std::chrono::steady_clock::time_point deadline);
  bool woken() const { return woken_.load(); }
  void reset() { woken_ = false; }

 private:
  boost::asio::steady_timer timer_;
  std::atomic<bool> woken_{false};
};

}  // namespace brokerd::cluster
