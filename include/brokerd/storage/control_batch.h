#pragma once
// Transaction markers as Kafka writes them: a control batch (transactional | control, base
// sequence -1) of one record whose key is int16 version 0 + int16 type (ABORT 0, COMMIT 1)
// and whose value is int16 version 0 + int32 coordinator epoch.
#include <cstdint>
#include <optional>

#include "brokerd/common/bytes.h"
#include "brokerd/storage/producer_state.h"
#include "brokerd/storage/record_batch.h"

namespace brokerd::storage {

struct TxnMarker {
  int64_t producer_id = kNoProducerId;
  int16_t producer_epoch = kNoProducerEpoch;
  int32_t coordinator_epoch = -1;
  ControlType type = ControlType::abort;
};

// The marker's batch at base offset 0, leader epoch -1 (the log sets both), timestamp `ts`.
Bytes build_marker_batch(const TxnMarker& m, int64_t timestamp_ms);
// The marker a control batch carries; nullopt for a data batch, a control record of another
// type, or one that does not parse. Needs the whole batch.
std::optional<TxnMarker> parse_marker_batch(const RecordBatchView& batch);

}  // namespace brokerd::storage
