// The Log's follower side: appending the leader's batches unchanged, and starting over at
// the leader's log start; and a mirror leader's append of a source cluster's batches.
#include <cstring>

#include "brokerd/common/logger.h"
#include "brokerd/storage/log.h"
#include "brokerd/storage/record_batch.h"

namespace brokerd::storage {

AppendResult Log::append_replica(std::span<const std::byte> batches, int64_t now_ms) {
  touch();
  AppendResult res;
  res.log_start_offset = log_start_offset_;
  if (closed_) {
    res.error = ErrorCode::kafka_storage_error;
    res.message = "log is closed";
    return res;
  }
  BatchLimits limits;
  limits.max_batch_bytes = SIZE_MAX;
  limits.stored = true;  // the leader's batches as stored: a cleaned one has gaps in its offsets
  std::vector<BatchInfo> infos;
  auto v = validate_batches(batches, limits, &infos);
  if (!v.ok() || infos.empty()) {
    res.error = v.ok() ? ErrorCode::corrupt_message : v.error;
    res.message = v.ok() ? "no batches" : std::move(v.message);
    return res;
  }
  int64_t next = log_end_offset();
  {
    // A log that starts inside the first batch (the leader's DeleteRecords or retention moved
    // its start there, and this empty log was reset to it): the batch is kept whole, the log
    // start stays where it was.
    RecordBatchView first(batches.subspan(infos.front().position, infos.front().size));
    if (first.base_offset() < next && first.last_offset() >= next && log_start_offset_ == next && size_bytes() == 0) {
      const int64_t start = log_start_offset_;
      reset_to(first.base_offset(), now_ms);
      log_start_offset_ = start;
      write_checkpoint();
      next = first.base_offset();
    }
  }
  std::vector<AppendBatch> metas;
  metas.reserve(infos.size());
  for (const auto& i : infos) {
    RecordBatchView b(batches.subspan(i.position, i.size));
    // A compacted log may skip offsets between batches; it never goes back.
    if (b.base_offset() < next) {
      res.error = ErrorCode::corrupt_message;
      res.message = "replicated batch at offset " + std::to_string(b.base_offset()) + " does not continue the log at " +
                    std::to_string(next);
      return res;
    }
    metas.push_back(AppendBatch{i.position, i.size, b.base_offset(), b.last_offset(), b.max_timestamp()});
    next = b.last_offset() + 1;
  }
  if (should_roll(batches.size(), metas.back().max_timestamp, next - 1, now_ms) && !roll_for_append(now_ms, res)) {
    return res;
  }
  if (int err = active().append(batches, metas); err != 0) {
    ++rewrites_;  // the partial write was cut back: a copy may have read it
    write_failed(res, std::string("write failed: ") + std::strerror(err), now_ms);
    return res;
  }
  write_succeeded();
  for (const auto& i : infos) note_replicated_producer(RecordBatchView(batches.subspan(i.position, i.size)));
  res.base_offset = metas.front().base_offset;
  res.last_offset = next - 1;
  res.record_count = v.record_count;
  return res;
}

AppendResult Log::append_mirrored(std::span<std::byte> batches, int32_t leader_epoch, int64_t now_ms) {
  size_t pos = 0;
  while (batches.size() - pos >= batch_layout::header_size) {
    MutableRecordBatchView b(batches.subspan(pos));
    const size_t size = b.size();
    if (b.batch_length() <= 0 || size > batches.size() - pos) break;  // validation names it
    b.set_partition_leader_epoch(leader_epoch);
    pos += size;
  }
  return append_replica(batches, now_ms);
}

void Log::reset_to(int64_t offset, int64_t now_ms) {
  ++rewrites_;
  touch();
  for (auto it = segments_.begin(); it != segments_.end();) {
    for (const auto& f : it->second->rename_for_delete()) std::filesystem::remove(f);
    it = segments_.erase(it);
  }
  segments_.emplace(offset, Segment::create(dir_, offset, cfg_, now_ms));
  ++dir_version_;
  log_start_offset_ = offset;
  recovery_point_ = offset;
  producers_.clear();
  producers_.delete_snapshots_after(-1);
  write_checkpoint();
}

}  // namespace brokerd::storage
