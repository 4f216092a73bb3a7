#pragma once
// The ISR changes of this node's leaders on their way to the controller. They are sent from a
// thread of their own (a forwarded call waits for the controller; it must not hold a reactor
// or the blocking pool's fsyncs), and the changes queued while one call is out go together in
// the next: one AlterPartition request and one change of the metadata log for all of them, so
// a node that returns and rejoins thousands of ISRs costs a handful of commits, not thousands.
#include <cstddef>
#include <functional>
#include <mutex>
#include <vector>

#include "brokerd/metadata/controller_channel.h"
#include "brokerd/partitions/topic_partition.h"
#include "brokerd/net/serial_worker.h"

namespace brokerd::metadata {
class MetadataStore;
}  // namespace brokerd::metadata

namespace brokerd::partitions {

class IsrChangeBatcher {
 public:
  struct Change {
    TopicPartition tp;
    metadata::AlterPartitionItem item;
    size_t isr_before = 0;  // the ISR's size when the leader asked
  };
  // Called on the batcher's thread with each change and the controller's answer to it.
  using Deliver = std::function<void(const Change&, const metadata::AlterPartitionAnswer&)>;

  IsrChangeBatcher(metadata::MetadataStore& store, Deliver deliver);
  ~IsrChangeBatcher();  // stop()
  IsrChangeBatcher(const IsrChangeBatcher&) = delete;
  IsrChangeBatcher& operator=(const IsrChangeBatcher&) = delete;

  // From any thread.
  void submit(Change change);
  // Waits for the call that is out; the changes still queued are dropped (their leaders ask
  // again). Idempotent.
  void stop();

  // Changes sent in one call at most.
  static constexpr size_t kMaxPerCall = 1000;

 private:
  void send_pending();

  metadata::MetadataStore& store_;
  Deliver deliver_;
  std::mutex mu_;
  std::vector<Change> pending_;
  net::SerialWorker worker_;
};

}  // namespace brokerd::partitions
