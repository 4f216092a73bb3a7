// Log reads: slices of segment files by offset, lookups by timestamp, and the open files
// a read holds.
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

ReadResult Log::read(int64_t offset, int32_t max_bytes, bool min_one_batch, int64_t max_offset_exclusive) const {
  ReadResult res;
  res.log_start_offset = log_start_offset_;
  res.log_end_offset = log_end_offset();
  if (offset < log_start_offset_ || offset > res.log_end_offset) {
    res.error = ErrorCode::offset_out_of_range;
    return res;
  }
  if (offset >= max_offset_exclusive || offset == res.log_end_offset) return res;
  touch();
  try {
    read_slices(offset, max_bytes, min_one_batch, max_offset_exclusive, res);
  } catch (const std::system_error& e) {
    res.records = brokerd::protocol::Records::empty();
    res.error = ErrorCode::kafka_storage_error;
    module_logger("storage")->error("{}: read at {} failed: {}", dir_.string(), offset, e.what());
  }
  return res;
}

void Log::read_slices(int64_t offset, int32_t max_bytes, bool min_one_batch, int64_t max_offset_exclusive,
                      ReadResult& res) const {
  uint64_t remaining = max_bytes > 0 ? static_cast<uint64_t>(max_bytes) : 0;
  bool first = true;
  bool done = false;
  auto it = segments_.upper_bound(offset);
  if (it != segments_.begin()) --it;
  for (; it != segments_.end() && !done; ++it) {
    const Segment& seg = *it->second;
    seg.file();  // throws when the segment cannot be opened, rather than reading as empty
    std::optional<BatchPosition> b = first ? seg.find_batch(offset) : seg.batch_at(0);
    uint64_t start = b ? b->position : 0;
    uint64_t len = 0;
    while (b) {
      if (b->base_offset >= max_offset_exclusive || (b->size > remaining && !(first && min_one_batch))) {
        done = true;
        break;
      }
      len += b->size;
      res.next_offset = b->last_offset + 1;
      remaining -= std::min<uint64_t>(b->size, remaining);
      first = false;
      b = seg.batch_at(b->position + b->size);
    }
    if (len > 0) res.records.parts.emplace_back(FileSlice{seg.file(), start, static_cast<uint32_t>(len)});
    if (remaining == 0) done = true;
  }
}

uint64_t Log::next_use_tick() {
  static std::atomic<uint64_t> tick{0};
  return tick.fetch_add(1, std::memory_order_relaxed) + 1;
}

void Log::release_files() {
  for (auto& [_, s] : segments_) s->release_files();
}

size_t Log::files_held() const {
  size_t n = 0;
  for (const auto& [_, s] : segments_) n += s->holds_file() ? 1 : 0;
  return n;
}

std::optional<Log::TimestampAndOffset> Log::max_timestamp_and_offset() const {
  touch();
  const Segment* best = nullptr;
  for (const auto& [_, s] : segments_) {
    if (s->max_timestamp() >= 0 && (!best || s->max_timestamp() > best->max_timestamp())) best = s.get();
  }
  if (!best) return std::nullopt;
  TimestampAndOffset r{best->max_timestamp(), best->offset_of_max_timestamp()};
  // The segment knows the batch; the exact record is the first one carrying the maximum.
  if (auto b = best->find_batch(best->offset_of_max_timestamp())) {
    Bytes buf(b->size);
    if (best->read_bytes(b->position, buf)) {
      RecordReader reader{RecordBatchView(buf)};
      Record rec;
      while (reader.next(rec)) {
        if (rec.timestamp == r.timestamp) {
          r.offset = rec.offset;
          break;
        }
      }
    }
  }
  return r;
}

std::optional<Log::TimestampAndOffset> Log::offset_for_timestamp(int64_t ts) const {
  touch();
  for (const auto& [_, s] : segments_) {
    if (s->max_timestamp() < ts || s->next_offset() <= log_start_offset_) continue;
    const Segment& seg = *s;
    uint64_t pos = 0;
    auto& seg_mut = const_cast<Segment&>(seg);  // index lookups do not modify
    if (auto e = seg_mut.time_index().lookup_below(ts)) pos = seg_mut.offset_index().lookup(e->offset + 1).position;
    for (auto b = seg.batch_at(pos); b; b = seg.batch_at(b->position + b->size)) {
      if (b->max_timestamp < ts || b->last_offset < log_start_offset_) continue;
      Bytes buf(b->size);
      if (!seg.read_bytes(b->position, buf)) break;
      RecordReader reader{RecordBatchView(buf)};
      Record rec;
      while (reader.next(rec)) {
        if (rec.timestamp >= ts && rec.offset >= log_start_offset_) return TimestampAndOffset{rec.timestamp, rec.offset};
      }
    }
  }
  return std::nullopt;
}

}  // namespace brokerd::storage
