#pragma once
// The cleaner's rewrite of one record batch (private to storage): which records stay, and
// the smallest change that keeps offsets, producer fields and the codec.
#include <cstdint>

#include "brokerd/common/bytes.h"
#include "brokerd/storage/offset_map.h"
#include "brokerd/storage/record_batch.h"

namespace brokerd::storage::detail {

struct BatchFilter {
  const OffsetMap* map = nullptr;
  int64_t end_offset = 0;  // records at or above are kept untouched (the map does not cover them)
  int64_t now_ms = 0;
  int64_t delete_retention_ms = 0;
  bool keep_if_empty = false;  // an idempotent producer's last batch
  bool aborted = false;        // a batch of an aborted transaction: none of its records stays
  // A marker whose transaction kept no data: it lives like a tombstone (a delete horizon at
  // its first such pass, removed by a pass after it). Other markers are kept whole.
  bool marker_removable = false;
};

struct BatchFilterStats {
  int64_t records_read = 0;
  int64_t records_kept = 0;
  int64_t tombstones_removed = 0;
  int64_t kept_horizon_ms = -1;  // delete horizon of the batch written, when it keeps tombstones
};

enum class FilterOutcome { keep_whole, rewritten, dropped };

// Decides the fate of `batch`; on `rewritten` the new batch is appended to `out`. `scratch`
// and `body` are reused buffers. Records that cannot be decoded set `error` (the caller
// abandons the pass rather than lose them).
FilterOutcome filter_batch(const RecordBatchView& batch, const BatchFilter& f, Bytes& out, Bytes& scratch,
                           Bytes& body, BatchFilterStats& stats, ErrorCode& error);

}  // namespace brokerd::storage::detail
