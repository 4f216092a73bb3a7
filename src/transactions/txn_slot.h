#pragma once
// One partition of __transaction_state as its coordinator holds it: the transactional ids it
// owns, on the partition's home shard (only touched there).
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <map>
#include <memory>
#include <string>

#include "brokerd/partitions/topic_partition.h"
#include "brokerd/transactions/transaction_coordinator.h"
#include "brokerd/transactions/txn_log.h"

namespace brokerd::transactions {

struct TransactionCoordinator::Slot {
  boost::asio::any_io_executor executor;
  partitions::TopicPartition tp;
  // This node leads the partition; the term counts leadership changes, so that the work of
  // an earlier term (a load, a marker completion, the timers) stops.
  bool led = false;
  bool loaded = false;
  uint64_t term = 0;
  // The partition's leader epoch when this node loaded it: the markers carry it, and a
  // partition leader refuses those of a lower one (a deposed coordinator).
  int32_t coordinator_epoch = 0;
  std::map<std::string, TxnMetadata> ids;
  int64_t ongoing = 0;  // ids in Ongoing (for the metrics)
  std::unique_ptr<boost::asio::steady_timer> timer;
  // Rung (cancelled) whenever a transition of an id completes or is abandoned: requests that
  // met a transition in flight wait on it, and `changes` tells them whether one happened
  // since they looked.
  std::unique_ptr<boost::asio::steady_timer> bell;
  uint64_t changes = 0;
  void changed() {
    ++changes;
    bell->cancel();
  }
};

// Kafka's answer for a failed write of the transaction log (TransactionStateManager).
ErrorCode log_write_error(ErrorCode append_error);

}  // namespace brokerd::transactions
