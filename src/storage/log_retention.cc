// Log retention and deletion: segments past retention.ms or retention.bytes (below the high
// watermark), DeleteRecords' log start, and the files of deleted segments.
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

void Log::delete_segment(std::map<int64_t, std::unique_ptr<Segment>>::iterator it, int64_t now_ms) {
  auto files = it->second->rename_for_delete();
  segments_.erase(it);
  producers_.delete_snapshots_before(segments_.begin()->first);
  if (cfg_.file_delete_delay_ms <= 0) {
    for (const auto& f : files) fs::remove(f);
  } else {
    pending_deletes_.push_back({std::move(files), now_ms + cfg_.file_delete_delay_ms});
  }
}

void Log::delete_expired_files(int64_t now_ms) {
  std::erase_if(pending_deletes_, [&](const PendingDelete& d) {
    if (d.deadline_ms > now_ms) return false;
    std::error_code ec;
    for (const auto& f : d.files) fs::remove(f, ec);
    return true;
  });
}

ErrorCode Log::delete_records_before(int64_t offset, int64_t now_ms) {
  touch();
  if (now_ms < 0) now_ms = now();
  if (offset > log_end_offset() || offset < 0) return ErrorCode::offset_out_of_range;
  if (offset <= log_start_offset_) return ErrorCode::none;
  log_start_offset_ = offset;
  while (!segments_.empty()) {
    auto it = segments_.begin();
    auto next = std::next(it);
    int64_t upper = next == segments_.end() ? log_end_offset() : next->first;
    if (upper > log_start_offset_) break;
    if (next == segments_.end()) {
      if (it->second->empty()) break;
      roll(now_ms);  // the active segment goes too: start a fresh one first
      continue;
    }
    delete_segment(it, now_ms);
  }
  write_checkpoint();
  return ErrorCode::none;
}

size_t Log::enforce_retention(int64_t now_ms, int64_t high_watermark) {
  size_t deleted = 0;
  auto delete_first_while = [&](auto pred, bool may_roll_active) {
    while (!segments_.empty()) {
      auto it = segments_.begin();
      bool is_active = std::next(it) == segments_.end();
      // Only committed records go: a segment holding one at or above the high watermark stays.
      if (it->second->next_offset() > high_watermark || !pred(*it->second)) break;
      if (is_active) {
        if (!may_roll_active || it->second->empty()) break;
        roll(now_ms);
        continue;
      }
      delete_segment(it, now_ms);
      ++deleted;
    }
  };
  if (cfg_.cleanup_policy.remove && cfg_.retention_ms >= 0) {
    delete_first_while([&](const Segment& s) { return now_ms - s.largest_timestamp() > cfg_.retention_ms; }, true);
  }
  if (cfg_.cleanup_policy.remove && cfg_.retention_bytes >= 0) {
    int64_t excess = static_cast<int64_t>(size_bytes()) - cfg_.retention_bytes;
    delete_first_while(
        [&](const Segment& s) {
          if (excess < static_cast<int64_t>(s.size())) return false;
          excess -= static_cast<int64_t>(s.size());
          return true;
        },
        false);
  }
  // Segments wholly below a log start moved by DeleteRecords.
  delete_first_while(
      [&](const Segment& s) { return s.next_offset() <= log_start_offset_ && s.base_offset() < log_start_offset_; },
      false);
  int64_t first_base = segments_.begin()->first;
  if (first_base > log_start_offset_) {
    log_start_offset_ = first_base;
    write_checkpoint();
  }
  delete_expired_files(now_ms);
  return deleted;
}

}  // namespace brokerd::storage
