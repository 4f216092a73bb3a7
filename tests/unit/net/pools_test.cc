#include <gtest/gtest.h>

#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>

#include <thread>

#include "brokerd/net/blocking_pool.h"
#include "brokerd/net/reactor_pool.h"
#include "brokerd/net/run_on.h"
#include "test_support.h"

namespace brokerd::net {
namespace {

using boost::asio::awaitable;

struct Pools : ::testing::Test {
  Pools() : reactors(2), blocking(2) { reactors.start(); }
  ~Pools() override {
    reactors.stop();
    reactors.join();
  }
  ReactorPool reactors;
  BlockingPool blocking;
};

TEST_F(Pools, CurrentShardIsMinusOneOffPool) { EXPECT_EQ(current_shard(), -1); }

TEST_F(Pools, RunOnSwitchesShardAndComesBack) {
  auto shards = test::run_sync<std::vector<int>>(reactors.executor(0), [&]() -> awaitable<std::vector<int>> {
    std::vector<int> seen{current_shard()};
    seen.push_back(co_await run_on(reactors, 1, [] { return current_shard(); }));
    seen.push_back(current_shard());
    // A callable returning an awaitable, which itself suspends on the target shard.
    seen.push_back(co_await run_on(reactors, 1, []() -> awaitable<int> {
      co_await test::sleep_for(std::chrono::milliseconds(1));
      co_return current_shard();
    }));
    seen.push_back(current_shard());
    co_return seen;
  });
  EXPECT_EQ(shards, (std::vector<int>{0, 1, 0, 1, 0}));
}

TEST_F(Pools, RunOnPropagatesExceptionsAndVoid) {
  auto result = test::run_sync<std::string>(reactors.executor(1), [&]() -> awaitable<std::string> {
    int ran_on = -2;
    co_await run_on(reactors, 0, [&] { ran_on = current_shard(); });
    try {
      co_await run_on(reactors, 0, []() -> int { throw std::runtime_error("boom"); });
    } catch (const std::runtime_error& e) {
      co_return std::to_string(ran_on) + ":" + e.what() + ":" + std::to_string(current_shard());
    }
    co_return "no exception";
  });
  EXPECT_EQ(result, "0:boom:1");
}

TEST_F(Pools, CapturedValuesAreReleasedExactlyOnce) {
  auto shared = std::make_shared<int>(7);
  auto seen = test::run_sync<long>(reactors.executor(0), [&]() -> awaitable<long> {
    // Named first (see run_on.h): GCC 12 mishandles capturing lambdas inside co_await.
    auto on_shard = [s = shared] { return s.use_count(); };
    auto inside = co_await run_on(reactors, 1, std::move(on_shard));
    auto on_pool = [s = shared] { return *s; };
    EXPECT_EQ(co_await blocking.run(std::move(on_pool)), 7);
    co_return inside;
  });
  EXPECT_GE(seen, 2);
  EXPECT_EQ(shared.use_count(), 1);
}

struct NoDefault {
  explicit NoDefault(int v) : value(v) {}
  int value;
};

TEST_F(Pools, RunOnNonDefaultConstructibleResult) {
  auto v = test::run_sync<int>(reactors.executor(0), [&]() -> awaitable<int> {
    auto r = co_await run_on(reactors, 1, [] { return NoDefault(current_shard() + 41); });
    co_return r.value;
  });
  EXPECT_EQ(v, 42);
}

TEST_F(Pools, BlockingPoolRunsOffTheReactor) {
  const auto reactor_thread = test::run_sync<std::thread::id>(
      reactors.executor(0), []() -> awaitable<std::thread::id> { co_return std::this_thread::get_id(); });
  struct Seen {
    std::thread::id worker;
    int worker_shard;
    int resumed_shard;
    std::thread::id resumed_thread;
  };
  auto seen = test::run_sync<std::optional<Seen>>(reactors.executor(0), [&]() -> awaitable<std::optional<Seen>> {
    Seen s{};
    auto [id, shard] = co_await blocking.run([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a blocking call
      return std::make_pair(std::this_thread::get_id(), current_shard());
    });
    s.worker = id;
    s.worker_shard = shard;
    s.resumed_shard = current_shard();
    s.resumed_thread = std::this_thread::get_id();
    co_return s;
  });
  ASSERT_TRUE(seen);
  EXPECT_NE(seen->worker, reactor_thread);
  EXPECT_EQ(seen->worker_shard, -1);
  EXPECT_EQ(seen->resumed_shard, 0);
  EXPECT_EQ(seen->resumed_thread, reactor_thread);
}

TEST_F(Pools, BlockingPoolDoesNotStallTheReactor) {
  // While a pool thread blocks, the reactor keeps running other work.
  std::atomic<bool> release{false};
  std::atomic<bool> finished{false};
  boost::asio::co_spawn(reactors.executor(0), [&]() -> awaitable<void> {
    co_await blocking.run([&] {
      while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    finished = true;
  }, boost::asio::detached);
  auto shard = test::run_sync<int>(reactors.executor(0), []() -> awaitable<int> { co_return current_shard(); });
  EXPECT_EQ(shard, 0);
  EXPECT_FALSE(finished.load());
  release = true;
  EXPECT_TRUE(test::eventually([&] { return finished.load(); }));
}

TEST_F(Pools, BlockingPoolPostAndExceptions) {
  std::atomic<int> ran{0};
  blocking.post([&] { ran++; });
  blocking.post([] { throw std::runtime_error("ignored"); });
  blocking.post([&] { ran++; });
  EXPECT_TRUE(test::eventually([&] { return ran.load() == 2; }));
  auto msg = test::run_sync<std::string>(reactors.executor(1), [&]() -> awaitable<std::string> {
    try {
      co_await blocking.run([]() -> int { throw std::runtime_error("disk"); });
    } catch (const std::exception& e) {
      co_return e.what();
    }
    co_return "none";
  });
  EXPECT_EQ(msg, "disk");
}

// drain(): the reactors run what is left (here, coroutines sleeping a little) and exit on
// their own, so no suspended frame is left to be destroyed with the pool.
TEST(ReactorDrain, RunsRemainingWorkToTheEnd) {
  ReactorPool pool(2);
  pool.start();
  std::atomic<int> finished{0};
  for (int i = 0; i < 100; ++i) {
    boost::asio::co_spawn(pool.executor(i % 2), [&finished, i]() -> awaitable<void> {
      co_await test::sleep_for(std::chrono::milliseconds(1 + i % 20));
      ++finished;
    }, boost::asio::detached);
  }
  EXPECT_TRUE(pool.drain(std::chrono::seconds(5)));
  EXPECT_EQ(finished.load(), 100);
  pool.join();
}

// Work that never ends (a timer far away) keeps a reactor busy: drain() says so in time.
TEST(ReactorDrain, ReportsWorkThatDoesNotEnd) {
  ReactorPool pool(1);
  pool.start();
  auto timer = std::make_shared<boost::asio::steady_timer>(pool.executor(0), std::chrono::hours(1));
  timer->async_wait([](const boost::system::error_code&) {});
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(pool.drain(std::chrono::milliseconds(200)));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  pool.stop();
  pool.join();
  timer.reset();
}

}  // namespace
}  // namespace brokerd::net
