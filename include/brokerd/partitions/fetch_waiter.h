#pragma once
// A fetch parked in the purgatory: it waits on its connection's executor until a partition
// it reads receives data (wake(), from any shard), its max_wait_ms runs out, or the node
// stops (FetchPurgatory::stop() wakes every waiter it handed out).
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <memory>

namespace brokerd::partitions {

class FetchPurgatory;

class FetchWaiter : public std::enable_shared_from_this<FetchWaiter> {
 public:
  // With a purgatory, the waiter is known to it until destroyed.
  explicit FetchWaiter(boost::asio::any_io_executor ex, FetchPurgatory* purgatory = nullptr)
      : timer_(ex), purgatory_(purgatory) {}
  ~FetchWaiter();
  FetchWaiter(const FetchWaiter&) = delete;
  FetchWaiter& operator=(const FetchWaiter&) = delete;

  // Safe from any thread; wakes the waiting fetch once. Hold the waiter in a shared_ptr.
  void wake();
  // Returns when woken or at `deadline`, whichever is first. Call on the waiter's executor.
  boost::asio::awaitable<void> wait_until(std::chrono::steady_clock::time_point deadline);
  bool woken() const { return woken_.load(); }
  // Arms the waiter for another wait; a no-op once its purgatory has stopped, so a fetch
  // never parks again after the stop.
  void reset();

 private:
  boost::asio::steady_timer timer_;
  FetchPurgatory* purgatory_;
  std::atomic<bool> woken_{false};
};

}  // namespace brokerd::partitions
