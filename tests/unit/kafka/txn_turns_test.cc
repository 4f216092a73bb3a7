// The turns that keep a producer's transactional appends to a partition in order while some
// wait for verification: served in the order taken, whatever order the waits end in.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <vector>

#include "kafka/txn_turns.h"

namespace brokerd::kafka {
namespace {

using namespace std::chrono_literals;

TEST(TxnTurns, ServedInTheOrderTaken) {
  boost::asio::io_context io;
  auto ex = io.get_executor();
  EXPECT_FALSE(txn_turns_waiting("t", 0, 7));
  std::vector<TxnTurn> turns;
  for (int i = 0; i < 3; ++i) turns.push_back(take_txn_turn(ex, "t", 0, 7));
  EXPECT_TRUE(txn_turns_waiting("t", 0, 7));
  EXPECT_FALSE(txn_turns_waiting("t", 1, 7)) << "another partition";
  EXPECT_FALSE(txn_turns_waiting("t", 0, 8)) << "another producer";
  std::vector<int> served;
  // The later turns start waiting first; each ends its turn as soon as it is served.
  for (int i : {2, 1, 0}) {
    boost::asio::co_spawn(io, [&, i]() -> boost::asio::awaitable<void> {
      co_await await_txn_turn(turns[i], 5000);
      served.push_back(i);
      end_txn_turn(turns[i], "t", 0, 7);
    }, boost::asio::detached);
  }
  io.run_for(1s);
  EXPECT_EQ(served, (std::vector<int>{0, 1, 2}));
  EXPECT_FALSE(txn_turns_waiting("t", 0, 7)) << "every turn ended: the queue is gone";
}

TEST(TxnTurns, AWaitIsBounded) {
  boost::asio::io_context io;
  auto first = take_txn_turn(io.get_executor(), "b", 0, 1);
  auto second = take_txn_turn(io.get_executor(), "b", 0, 1);
  bool served = false;
  const auto started = std::chrono::steady_clock::now();
  boost::asio::co_spawn(io, [&]() -> boost::asio::awaitable<void> {
    co_await await_txn_turn(second, 50);  // the first never ends
    served = true;
    end_txn_turn(second, "b", 0, 1);
  }, boost::asio::detached);
  io.run_for(2s);
  EXPECT_TRUE(served);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);
  end_txn_turn(first, "b", 0, 1);  // late: the queue is already past it
  EXPECT_FALSE(txn_turns_waiting("b", 0, 1));
}

}  // namespace
}  // namespace brokerd::kafka
