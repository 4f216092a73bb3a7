// The Log's transactions: markers written by the leader, markers met in the log (replicated
// or replayed), and the aborted transactions a read_committed read needs.
#include <cstring>

#include "brokerd/common/logger.h"
#include "brokerd/storage/log.h"

namespace brokerd::storage {

AppendResult Log::append_marker(const TxnMarker& m, int32_t leader_epoch, int64_t now_ms) {
  touch();
  AppendResult res;
  res.log_start_offset = log_start_offset_;
  if (closed_) {
    res.error = ErrorCode::kafka_storage_error;
    res.message = "log is closed";
    return res;
  }
  if (ErrorCode e = producers_.check_marker(m.producer_id, m.producer_epoch, m.coordinator_epoch, &res.message);
      e != ErrorCode::none) {
    res.error = e;
    return res;
  }
  Bytes batch = build_marker_batch(m, now_ms);
  const int64_t base = log_end_offset();
  if (should_roll(batch.size(), now_ms, base, now_ms) && !roll_for_append(now_ms, res)) return res;
  MutableRecordBatchView b(batch);
  b.set_base_offset(base);
  b.set_partition_leader_epoch(leader_epoch);
  const bool log_append_time = cfg_.message_timestamp_type == TimestampType::log_append_time;
  if (log_append_time) b.set_log_append_time(now_ms);
  const AppendBatch meta{0, batch.size(), base, base, now_ms};
  if (int err = active().append(batch, std::span<const AppendBatch>(&meta, 1)); err != 0) {
    ++rewrites_;
    write_failed(res, std::string("write failed: ") + std::strerror(err), now_ms);
    return res;
  }
  write_succeeded();
  note_marker(m, base, now_ms, true);
  res.base_offset = base;
  res.last_offset = base;
  res.record_count = 1;
  res.log_append_time = log_append_time ? now_ms : -1;
  return res;
}

void Log::note_marker(const TxnMarker& m, int64_t offset, int64_t timestamp, bool index) {
  auto done = producers_.apply_marker(m.producer_id, m.producer_epoch, m.coordinator_epoch, m.type, offset, timestamp);
  if (done && done->aborted && index) index_aborted(*done);
}

void Log::index_aborted(const CompletedTxn& t) {
  auto it = segments_.upper_bound(t.last_offset);
  if (it == segments_.begin()) return;
  --it;  // the segment holding the marker
  AbortedTxn a{t.producer_id, t.first_offset, t.last_offset, producers_.last_stable_offset_after(t)};
  if (!it->second->txn_index().append(a))
    module_logger("storage")->error("{}: cannot write the aborted transaction of producer {} at {} to {}",
                                    dir_.string(), t.producer_id, t.last_offset,
                                    it->second->txn_index().path().string());
}

std::vector<AbortedTxn> Log::aborted_transactions(int64_t from, int64_t upper) const {
  std::vector<AbortedTxn> out;
  auto it = segments_.upper_bound(from);
  if (it != segments_.begin()) --it;
  for (; it != segments_.end(); ++it) {
    for (const auto& t : it->second->txn_index().entries())
      if (t.last_offset >= from && t.first_offset < upper) out.push_back(t);
  }
  return out;
}

}  // namespace brokerd::storage
