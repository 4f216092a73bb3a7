#pragma once
// The order of a producer's transactional appends to one partition while some of them wait
// for the coordinator (KIP-890 verification). Pipelined produce requests post their appends
// in arrival order; a request whose batch must first be verified takes a turn instead, and so
// does every later transactional batch of that producer to that partition until the queue is
// empty, so verification never reorders a producer's batches.
//
// Shard-local: every call on the partition's home shard (one reactor thread per shard, so the
// queues are per thread and take no locks).
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace brokerd::kafka {

struct TxnTurnQueue;

struct TxnTurn {
  std::shared_ptr<TxnTurnQueue> queue;
  uint64_t number = 0;
};

// Whether a turn of this producer on this partition is still to be served.
bool txn_turns_waiting(const std::string& topic, int32_t partition, int64_t producer_id);
// Takes the next turn (the first one is served at once).
TxnTurn take_txn_turn(const boost::asio::any_io_executor& shard, const std::string& topic, int32_t partition,
                      int64_t producer_id);
// Waits, on the shard, until the turns before this one are done (at most max_wait_ms: a turn
// is always ended, but a bound keeps a bug from stalling the partition's producer for good).
boost::asio::awaitable<void> await_txn_turn(TxnTurn turn, int64_t max_wait_ms);
// Ends the turn: the next one is served.
void end_txn_turn(const TxnTurn& turn, const std::string& topic, int32_t partition, int64_t producer_id);

}  // namespace brokerd::kafka
