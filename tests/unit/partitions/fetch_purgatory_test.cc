// The fetch purgatory: a stop wakes every parked fetch at once, later waiters start woken,
// and a wake racing a re-arm is never lost. Waiters run on real reactor threads.
#include "brokerd/partitions/fetch_purgatory.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include "brokerd/net/reactor_pool.h"

namespace brokerd::partitions {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

template <typename Pred>
bool eventually(Pred p, std::chrono::milliseconds within) {
  const auto deadline = Clock::now() + within;
  while (Clock::now() < deadline) {
    if (p()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return p();
}

struct Purgatory : ::testing::Test {
  Purgatory() : reactors(2) { reactors.start(); }
  ~Purgatory() override {
    EXPECT_TRUE(reactors.drain(5s));
    reactors.join();
  }

  // Parks `n` waiters for an hour; counts those that return.
  void park(size_t n, std::atomic<int>& returned) {
    for (size_t i = 0; i < n; ++i) {
      auto ex = reactors.executor(i % reactors.size());
      boost::asio::co_spawn(ex, [this, ex, &returned]() -> boost::asio::awaitable<void> {
        auto w = purgatory.waiter(ex);
        w->reset();
        co_await w->wait_until(Clock::now() + 1h);
        ++returned;
      }, boost::asio::detached);
    }
  }

  net::ReactorPool reactors;
  FetchPurgatory purgatory;
};

TEST_F(Purgatory, StopWakesEveryParkedFetchAtOnce) {
  std::atomic<int> returned{0};
  park(5000, returned);
  ASSERT_TRUE(eventually([&] { return purgatory.size() == 5000; }, 5s));
  EXPECT_EQ(returned.load(), 0);
  const auto t0 = Clock::now();
  purgatory.stop();
  ASSERT_TRUE(eventually([&] { return returned.load() == 5000; }, 5s));
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
  std::printf("5000 parked fetches woken in %lld ms\n", static_cast<long long>(took.count()));
  EXPECT_TRUE(eventually([&] { return purgatory.size() == 0; }, 5s));
}

TEST_F(Purgatory, WaitersAfterStopDoNotPark) {
  purgatory.stop();
  std::atomic<int> returned{0};
  park(100, returned);
  EXPECT_TRUE(eventually([&] { return returned.load() == 100; }, 5s));
}

TEST_F(Purgatory, AWakeIsNeverLostToAReArm) {
  // Waiters re-arm and wait again in a loop while the stop comes from another thread: each
  // must see the stop and return.
  std::atomic<int> returned{0};
  for (int i = 0; i < 200; ++i) {
    auto ex = reactors.executor(i % 2);
    boost::asio::co_spawn(ex, [this, ex, &returned]() -> boost::asio::awaitable<void> {
      auto w = purgatory.waiter(ex);
      while (!purgatory.stopped()) {
        w->reset();
        co_await w->wait_until(Clock::now() + 1ms);
      }
      w->reset();
      co_await w->wait_until(Clock::now() + 1h);  // must not park: the purgatory stopped
      ++returned;
    }, boost::asio::detached);
  }
  std::this_thread::sleep_for(20ms);
  purgatory.stop();
  EXPECT_TRUE(eventually([&] { return returned.load() == 200; }, 5s));
}

TEST(FetchWaiterAlone, WakeFromAnotherThreadEndsTheWait) {
  net::ReactorPool reactors(1);
  reactors.start();
  auto w = std::make_shared<FetchWaiter>(reactors.executor(0));
  std::atomic<bool> done{false};
  boost::asio::co_spawn(reactors.executor(0), [w, &done]() -> boost::asio::awaitable<void> {
    co_await w->wait_until(Clock::now() + 1h);
    done = true;
  }, boost::asio::detached);
  std::this_thread::sleep_for(10ms);
  w->wake();
  EXPECT_TRUE(eventually([&] { return done.load(); }, 5s));
  EXPECT_TRUE(reactors.drain(5s));
  reactors.join();
}

}  // namespace
}  // namespace brokerd::partitions
