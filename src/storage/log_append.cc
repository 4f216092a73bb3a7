// Log appends: batches checked and written to the active segment, and segments rolled.
#include "brokerd/storage/log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/storage/record_batch.h"
#include "brokerd/storage/recompress.h"

namespace brokerd::storage {

namespace fs = std::filesystem;

bool Log::should_roll(size_t incoming_bytes, int64_t incoming_max_ts, int64_t last_offset, int64_t now_ms) const {
  const Segment& s = active();
  if (s.empty()) return false;
  if (s.size() + incoming_bytes > static_cast<uint64_t>(cfg_.segment_bytes)) return true;
  if (s.time_waited_for_roll(now_ms, incoming_max_ts) > cfg_.segment_ms - s.roll_jitter_ms()) return true;
  if (s.indexes_full()) return true;
  return last_offset - s.base_offset() > INT32_MAX;
}

AppendResult Log::append(std::span<std::byte> batches, int32_t leader_epoch, int64_t now_ms, AppendOrigin origin,
                         TxnAppendMode txn) {
  touch();
  AppendResult res;
  res.log_start_offset = log_start_offset_;
  if (closed_) {
    res.error = ErrorCode::kafka_storage_error;
    res.message = "log is closed";
    return res;
  }
  if (origin == AppendOrigin::client && has_more_than_one_batch(batches)) {
    res.error = ErrorCode::invalid_record;
    res.message = "a produce request must carry exactly one record batch per partition";
    return res;
  }
  BatchLimits limits;
  limits.max_batch_bytes = static_cast<size_t>(cfg_.max_message_bytes);
  limits.require_keys = cfg_.cleanup_policy.compact;
  limits.from_client = origin == AppendOrigin::client;
  // The node's own writers append transactional batches of their own making.
  if (origin != AppendOrigin::client && txn.kind == TxnAppendMode::Kind::not_allowed) txn = TxnAppendMode::unverified();
  limits.refuse_transactional = txn.kind == TxnAppendMode::Kind::not_allowed;
  std::string partition_name;  // a compacted topic names it in its records' errors
  if (limits.require_keys) partition_name = dir_.filename().string();
  limits.partition_name = partition_name;
  if (origin == AppendOrigin::client && cfg_.message_timestamp_type == TimestampType::create_time) {
    limits.earliest_timestamp = cfg_.timestamp_before_max_ms >= now_ms ? INT64_MIN : now_ms - cfg_.timestamp_before_max_ms;
    limits.latest_timestamp =
        cfg_.timestamp_after_max_ms >= INT64_MAX - now_ms ? INT64_MAX : now_ms + cfg_.timestamp_after_max_ms;
  }
  std::vector<BatchInfo> infos;
  auto v = validate_batches(batches, limits, &infos);
  if (!v.ok()) {
    res.error = v.error;
    res.message = std::move(v.message);
    res.record_errors = std::move(v.record_errors);
    return res;
  }
  // A compression.type other than "producer": client batches in another codec are re-encoded
  // (and checked again: the new form must fit max.message.bytes too).
  Bytes reencoded;
  if (cfg_.recompress && origin == AppendOrigin::client) {
    if (auto r = recompress_batches(batches, infos, *cfg_.recompress, cfg_.compression_level)) {
      if (!r->error.empty()) {
        res.error = ErrorCode::corrupt_message;
        res.message = std::move(r->error);
        return res;
      }
      reencoded = std::move(r->batches);
      batches = std::span<std::byte>(reencoded);
      infos.clear();
      auto again = validate_batches(batches, limits, &infos);
      if (!again.ok()) {
        res.error = again.error;
        res.message = std::move(again.message);
        return res;
      }
    }
  }
  const bool log_append_time = cfg_.message_timestamp_type == TimestampType::log_append_time;
  int64_t base = log_end_offset();
  ProducerAppend producer_append(producers_, txn);
  std::vector<std::optional<ProducerBatch>> dups;
  if (!check_producers(batches, infos, base, log_append_time ? now_ms : -1, producer_append, dups, res)) return res;

  // Idempotent retries are answered with their original offsets and not written again; the
  // batches to write are moved together at the front of the payload.
  int64_t first_offset = -1, last_offset = -1, written_records = 0;
  size_t write_bytes = 0;
  std::vector<BatchInfo> fresh;
  fresh.reserve(infos.size());
  for (size_t k = 0; k < infos.size(); ++k) {
    if (dups[k]) {
      if (first_offset < 0) first_offset = dups[k]->first_offset;
      last_offset = dups[k]->last_offset;
      continue;
    }
    BatchInfo i = infos[k];
    if (i.position != write_bytes) std::memmove(batches.data() + write_bytes, batches.data() + i.position, i.size);
    i.position = write_bytes;
    write_bytes += i.size;
    written_records += i.records_count;
    fresh.push_back(i);
  }
  if (fresh.empty()) {
    const ProducerBatch& d = *dups.front();
    res.duplicate = true;
    res.base_offset = first_offset;
    res.last_offset = last_offset;
    res.log_append_time = log_append_time ? d.timestamp : -1;
    return res;
  }
  batches = batches.first(write_bytes);

  int64_t offsets = 0, incoming_max_ts = -1;
  for (const auto& i : fresh) {
    offsets += int64_t{i.last_offset_delta} + 1;
    incoming_max_ts = std::max(incoming_max_ts, log_append_time ? now_ms : i.max_timestamp);
  }
  if (should_roll(batches.size(), incoming_max_ts, base + offsets - 1, now_ms) && !roll_for_append(now_ms, res)) {
    return res;
  }

  std::vector<AppendBatch> metas;
  metas.reserve(fresh.size());
  int64_t next = base;
  for (const auto& i : fresh) {
    MutableRecordBatchView b(batches.subspan(i.position, i.size));
    b.set_base_offset(next);
    b.set_partition_leader_epoch(leader_epoch);
    int64_t max_ts = i.max_timestamp;
    if (log_append_time) {
      b.set_log_append_time(now_ms);
      max_ts = now_ms;
    }
    int64_t last = next + i.last_offset_delta;
    metas.push_back(AppendBatch{i.position, i.size, next, last, max_ts});
    next = last + 1;
  }
  if (int err = active().append(batches, metas); err != 0) {
    ++rewrites_;  // the partial write was cut back: a copy may have read it
    write_failed(res, std::string("write failed: ") + std::strerror(err), now_ms);
    return res;
  }
  write_succeeded();
  producer_append.commit(producers_);
  res.base_offset = dups.front() ? first_offset : base;
  res.last_offset = dups.back() ? last_offset : next - 1;
  res.log_append_time = log_append_time ? now_ms : -1;
  res.record_count = written_records;
  return res;
}

void Log::roll(int64_t now_ms) {
  Segment& cur = active();
  if (cur.empty()) return;
  int64_t base = cur.next_offset();
  auto next = Segment::create(dir_, base, cfg_, now_ms);  // throws with the log unchanged
  cur.make_inactive();
  segments_.emplace(base, std::move(next));
  ++dir_version_;  // the new files' directory entries are durable only after a dir fsync
  producers_.write_snapshot(base, false);
}

bool Log::roll_for_append(int64_t now_ms, AppendResult& res) {
  try {
    roll(now_ms);
    return true;
  } catch (const std::system_error& e) {
    write_failed(res, std::string("cannot start a new segment: ") + e.what(), now_ms);
    return false;
  }
}

void Log::write_failed(AppendResult& res, std::string message, int64_t now_ms) {
  res.error = ErrorCode::kafka_storage_error;
  res.message = std::move(message);
  ++write_failures_;
  ++failures_unreported_;
  if (write_failures_ == 1) {
    module_logger("storage")->error("{}: {}", dir_.string(), res.message);
  } else if (now_ms - failure_reported_ms_ >= 10'000) {
    module_logger("storage")->error("{}: {} ({} appends failed since the last report)", dir_.string(), res.message,
                                    failures_unreported_);
  } else {
    return;
  }
  failures_unreported_ = 0;
  failure_reported_ms_ = now_ms;
}

}  // namespace brokerd::storage
