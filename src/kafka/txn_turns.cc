#include "kafka/txn_turns.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <map>
#include <tuple>

namespace brokerd::kafka {

struct TxnTurnQueue {
  explicit TxnTurnQueue(const boost::asio::any_io_executor& ex) : bell(ex) {}
  uint64_t next = 0;     // the number the next turn gets
  uint64_t serving = 0;  // the turn that may append now
  boost::asio::steady_timer bell;  // cancelled whenever a turn ends: the waiters look again
};

namespace {

using Key = std::tuple<std::string, int32_t, int64_t>;

std::map<Key, std::shared_ptr<TxnTurnQueue>>& queues() {
  thread_local std::map<Key, std::shared_ptr<TxnTurnQueue>> here;
  return here;
}

}  // namespace

bool txn_turns_waiting(const std::string& topic, int32_t partition, int64_t producer_id) {
  auto it = queues().find({topic, partition, producer_id});
  return it != queues().end() && it->second->serving < it->second->next;
}

TxnTurn take_txn_turn(const boost::asio::any_io_executor& shard, const std::string& topic, int32_t partition,
                      int64_t producer_id) {
  auto& q = queues()[{topic, partition, producer_id}];
  if (!q) q = std::make_shared<TxnTurnQueue>(shard);
  return {q, q->next++};
}

boost::asio::awaitable<void> await_txn_turn(TxnTurn turn, int64_t max_wait_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(max_wait_ms);
  while (turn.queue->serving < turn.number && std::chrono::steady_clock::now() < deadline) {
    turn.queue->bell.expires_at(deadline);
    co_await turn.queue->bell.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  }
}

void end_txn_turn(const TxnTurn& turn, const std::string& topic, int32_t partition, int64_t producer_id) {
  auto& q = *turn.queue;
  if (q.serving <= turn.number) q.serving = turn.number + 1;
  q.bell.cancel();
  if (q.serving >= q.next) {
    auto it = queues().find({topic, partition, producer_id});
    if (it != queues().end() && it->second == turn.queue) queues().erase(it);
  }
}

}  // namespace brokerd::kafka
