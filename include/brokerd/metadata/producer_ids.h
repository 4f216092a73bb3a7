#pragma once
// Producer ids for idempotent producers (InitProducerId without a transactional id). Ids are
// handed out from blocks that the metadata log allocates (one ProducerIdsRecord per block,
// the answer Kafka's controller gives to AllocateProducerIds), so an id is never given
// twice, across restarts too. Epochs follow KIP-360: a producer that re-initialises with its
// current id and epoch gets epoch + 1, and a new id once the epoch is exhausted.
//
// Threading: any thread (a mutex guards it). Fetching a new block appends to the metadata
// log and fsyncs, so call init() from a blocking pool, never on a reactor.
#include <cstdint>
#include <functional>
#include <mutex>
#include <unordered_map>

#include "brokerd/protocol/error_code.h"

namespace brokerd::metadata {

struct ProducerIdBlock {
  int32_t broker_id = -1;
  int64_t first = 0;  // ProducerIdStart
  int32_t size = 0;   // ProducerIdLen
  int64_t end() const { return first + size; }
};

class ProducerIdManager {
 public:
  static constexpr int32_t kBlockSize = 1000;  // Kafka's block size
  // Kafka treats an epoch this high as exhausted and moves the producer to a new id.
  static constexpr int16_t kMaxEpoch = INT16_MAX - 1;
  static constexpr size_t kMaxTracked = 100000;

  // Returns the next block; throws when it cannot be allocated.
  using AllocateBlock = std::function<ProducerIdBlock()>;
  explicit ProducerIdManager(AllocateBlock allocate) : allocate_(std::move(allocate)) {}

  struct Result {
    protocol::ErrorCode error = protocol::ErrorCode::none;
    int64_t producer_id = -1;
    int16_t epoch = -1;
  };
  // producer_id/epoch are -1 for a new producer, else the producer's current ones (v3+).
  // An older epoch than the last one given is fenced (PRODUCER_FENCED), except the one just
  // before it: the retry of a bump whose answer was lost gets the same answer again.
  // Bookkeeping of a producer is dropped after expiration_ms without an init.
  Result init(int64_t producer_id, int16_t epoch, int64_t now_ms, int64_t expiration_ms);
  // A new producer id, not tracked here (a transaction coordinator keeps its own epochs).
  // May allocate a block: throws when it cannot.
  int64_t next();

 private:
  int64_t next_id();  // under mu_

  struct Issued {
    int16_t epoch;
    int64_t at_ms;
  };
  std::mutex mu_;
  AllocateBlock allocate_;
  ProducerIdBlock block_;
  int64_t next_ = 0;
  int64_t last_sweep_ms_ = 0;
  std::unordered_map<int64_t, Issued> issued_;
};

}  // namespace brokerd::metadata
