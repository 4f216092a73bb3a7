#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <memory>

#include "brokerd/net/reactor_pool.h"
#include "brokerd/net/request_time.h"
#include "brokerd/net/run_on.h"
#include "test_support.h"

namespace brokerd::net {
namespace {

using boost::asio::awaitable;
using namespace std::chrono_literals;

void spin(std::chrono::milliseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
  }
}

struct RequestTime : ::testing::Test {
  RequestTime() : reactors(2) { reactors.start(); }
  ~RequestTime() override {
    reactors.stop();
    reactors.join();
  }
  ReactorPool reactors;
};

// What the account holds once the charged coroutine has returned, read where the dispatcher
// reads it: in the caller, which may resume inside the last charged step.
double charged_ms(const TimeAccount& a) { return static_cast<double>(charged_nanos(a)) / 1e6; }

TEST_F(RequestTime, ChargesStepsAndHopsButNotWaits) {
  auto account = std::make_shared<TimeAccount>();
  double charged = 0;
  auto shard = test::run_sync<int>(reactors.executor(0), [&]() -> awaitable<int> {
    auto work = [&]() -> awaitable<int> {
      spin(20ms);                          // a step on the request's own shard
      co_await test::sleep_for(1000ms);    // a wait: free
      auto hop = [] { spin(15ms); };
      co_await run_on(reactors, 1, hop);  // a hop: charged
      spin(10ms);
      co_return current_shard();
    };
    auto ex = charging(co_await boost::asio::this_coro::executor, account);
    const int on = co_await boost::asio::co_spawn(ex, work(), boost::asio::use_awaitable);
    charged = charged_ms(*account);
    co_return on;
  });
  EXPECT_EQ(shard, 0);
  EXPECT_GE(charged, 45.0);
  // The 1 s sleep is not in it. (The bound leaves room for the hops' scheduling delays on a
  // loaded machine, which are charged; a charged sleep would still exceed it.)
  EXPECT_LT(charged, 45.0 + 800.0);
}

TEST_F(RequestTime, TheRunningStepCountsBeforeItEnds) {
  auto account = std::make_shared<TimeAccount>();
  auto seen = test::run_sync<int64_t>(reactors.executor(0), [&]() -> awaitable<int64_t> {
    auto work = [&]() -> awaitable<int64_t> {
      spin(10ms);
      co_return charged_nanos(*account);
    };
    auto ex = charging(co_await boost::asio::this_coro::executor, account);
    co_return co_await boost::asio::co_spawn(ex, work(), boost::asio::use_awaitable);
  });
  EXPECT_GE(seen, 10'000'000);
  EXPECT_GE(account->nanos.load(), seen);  // the step, once ended, is in the account
  EXPECT_EQ(charged_nanos(*account), account->nanos.load());  // no step of it runs here
}

TEST_F(RequestTime, ChargesNothingOutsideACharge) {
  auto account = std::make_shared<TimeAccount>();
  test::run_sync<int>(reactors.executor(0), [&]() -> awaitable<int> {
    auto hop = [] { spin(10ms); };
    co_await run_on(reactors, 1, hop);
    co_return 0;
  });
  EXPECT_EQ(account->nanos.load(), 0);
}

TEST_F(RequestTime, AHopToTheSameShardIsCountedOnce) {
  auto account = std::make_shared<TimeAccount>();
  double charged = 0;
  test::run_sync<int>(reactors.executor(0), [&]() -> awaitable<int> {
    auto work = [&]() -> awaitable<int> {
      auto hop = [] { spin(20ms); };
      co_await run_on(reactors, 0, hop);  // runs inline, inside the step
      co_return 0;
    };
    auto ex = charging(co_await boost::asio::this_coro::executor, account);
    co_await boost::asio::co_spawn(ex, work(), boost::asio::use_awaitable);
    charged = charged_ms(*account);
    co_return 0;
  });
  EXPECT_GE(charged, 20.0);
  EXPECT_LT(charged, 35.0);
}

}  // namespace
}  // namespace brokerd::net
