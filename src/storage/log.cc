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

Log::Log(fs::path dir, LogConfig cfg) : dir_(std::move(dir)), cfg_(cfg) {}

// Destructors never throw: a failure here is logged and the next start recovers.
Log::~Log() {
  try {
    close();
  } catch (const std::exception& e) {
    module_logger("storage")->error("closing {} failed: {}", dir_.string(), e.what());
  }
}

int64_t Log::now() const { return wall_clock_ms(); }

std::unique_ptr<Log> Log::open(fs::path dir, LogConfig cfg, bool clean_shutdown) {
  fs::create_directories(dir);
  std::unique_ptr<Log> log(new Log(std::move(dir), cfg));
  try {
    log->load(clean_shutdown);
  } catch (...) {
    log->closed_ = true;  // partly loaded: nothing to flush or checkpoint
    throw;
  }
  return log;
}

void Log::load(bool clean_shutdown) {
  auto logger = module_logger("storage");
  // The directory is listed once: a start reads thousands of them.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
  std::vector<int64_t> bases;
  std::erase_if(names, [&](const std::string& name) {
    // Leftovers of an interrupted delete or write: never part of the log. A `.log.swap` is a
    // committed compaction swap (completed below); index `.swap` files are rebuilt instead.
    if (name.ends_with(".log.swap")) return false;
    if (name.ends_with(".deleted") || name.ends_with(".tmp") || name.ends_with(".cleaned") ||
        name.ends_with(".swap")) {
      fs::remove(dir_ / name);
      return true;
    }
    if (name.ends_with(".log")) {
      if (auto b = parse_segment_file_stem(name.substr(0, name.size() - 4))) bases.push_back(*b);
    }
    return false;
  });
  complete_interrupted_swaps(bases, names);
  // Index files whose segment is gone.
  for (const auto& name : names) {
    const bool offset_index = name.ends_with(".index"), time_index = name.ends_with(".timeindex"),
               txn_index = name.ends_with(".txnindex");
    if (!offset_index && !time_index && !txn_index) continue;
    auto b = parse_segment_file_stem(name.substr(0, name.size() - (offset_index ? 6 : txn_index ? 9 : 10)));
    if (!b || !std::binary_search(bases.begin(), bases.end(), *b)) fs::remove(dir_ / name);
  }
  producers_.set_snapshot_files(names);
  read_checkpoint();
  int64_t t = now();

  if (bases.empty()) {
    segments_.emplace(log_start_offset_, Segment::create(dir_, log_start_offset_, cfg_, t));
    recovery_point_ = log_start_offset_;
    load_producer_state();
    return;
  }
  // Recovery starts at the segment holding the recovery point (at least the last one).
  size_t recover_from = bases.size() - 1;
  if (!clean_shutdown) {
    while (recover_from > 0 && bases[recover_from] > recovery_point_) --recover_from;
  }
  int64_t rebuild_txn_index_from = INT64_MAX;
  for (size_t i = 0; i < bases.size(); ++i) {
    bool last = i + 1 == bases.size();
    bool recover = !clean_shutdown && i >= recover_from;
    auto seg = Segment::open(dir_, bases[i], cfg_, last || recover, t);
    if (recover) {
      // Its aborted transactions are found again from the markers (load_producer_state).
      seg->txn_index().reset();
      rebuild_txn_index_from = std::min(rebuild_txn_index_from, bases[i]);
      uint64_t cut = seg->recover(cfg_.max_message_bytes, &recovered_epochs_);
      if (cut > 0) {
        logger->warn("{}: recovered segment {} cut {} bytes of invalid data", dir_.string(), bases[i], cut);
        if (!last) {
          // Data after a torn segment cannot be trusted to follow on: drop it.
          for (size_t j = i + 1; j < bases.size(); ++j) {
            auto stem = dir_ / segment_file_stem(bases[j]);
            for (const char* ext : {".log", ".index", ".timeindex", ".txnindex"}) fs::remove(stem.string() + ext);
          }
          bases.resize(i + 1);
          last = true;
        }
      }
    } else if (!seg->load_state()) {
      logger->warn("{}: rebuilding indexes of segment {}", dir_.string(), bases[i]);
      seg.reset();
      seg = Segment::open(dir_, bases[i], cfg_, true, t);
      seg->recover(cfg_.max_message_bytes);
    }
    if (!last) {
      seg->make_inactive();
      seg->release_files();  // closed segments open again when read
    }
    segments_.emplace(bases[i], std::move(seg));
    if (last) break;
  }
  int64_t leo = log_end_offset();
  log_start_offset_ = std::clamp(log_start_offset_, segments_.begin()->first, leo);
  recovery_point_ = leo;  // clean, or just validated by recovery
  // A clean stop synced the directory; after a crash its entries are synced again.
  if (clean_shutdown) dir_synced_version_ = dir_version_;
  load_producer_state(rebuild_txn_index_from);
}

int64_t Log::log_end_offset() const { return active().next_offset(); }

uint64_t Log::size_bytes() const {
  uint64_t n = 0;
  for (const auto& [_, s] : segments_) n += s->size();
  return n;
}

std::vector<const Segment*> Log::segments() const {
  std::vector<const Segment*> out;
  for (const auto& [_, s] : segments_) out.push_back(s.get());
  return out;
}

void Log::note_recovery() {
  module_logger("storage")->info("{}: appends succeed again after {} failed", dir_.string(), write_failures_);
  write_failures_ = 0;
  failures_unreported_ = 0;
}

void Log::close() {
  if (closed_) return;
  flush();
  // An empty log has nothing to rebuild producers from: no snapshot needed.
  const int64_t leo = log_end_offset();
  if (leo > segments_.begin()->first && !producers_.snapshot_matches(leo)) producers_.write_snapshot(leo, true);
  for (auto& [_, s] : segments_) s->close();
  write_checkpoint();
  closed_ = true;
}

void Log::update_config(LogConfig cfg) { cfg_ = cfg; }

void Log::truncate_to(int64_t offset) {
  touch();
  if (offset >= log_end_offset()) return;
  int64_t t = now();
  if (offset < log_start_offset_) {
    // Nothing of this log is below the cut: it starts again, empty, at `offset` (the
    // segments would otherwise keep their bases and the log end could never go back).
    reset_to(offset, t);
    return;
  }
  ++rewrites_;
  while (segments_.size() > 1 && segments_.rbegin()->first >= offset) {
    auto it = std::prev(segments_.end());
    for (const auto& f : it->second->rename_for_delete()) fs::remove(f);
    segments_.erase(it);
  }
  // The remaining last segment becomes the active one again, with writable indexes.
  auto it = std::prev(segments_.end());
  int64_t base = it->first;
  it->second->close();
  it->second = Segment::open(dir_, base, cfg_, true, t);
  it->second->truncate_to(offset, cfg_.max_message_bytes);
  int64_t leo = log_end_offset();
  recovery_point_ = std::min(recovery_point_, leo);
  if (log_start_offset_ > leo) log_start_offset_ = leo;
  write_checkpoint();
  load_producer_state();
}

void Log::write_checkpoint() {
  if (checkpointed_ == std::pair{log_start_offset_, recovery_point_}) return;  // the file says so already
  // A recovery point on disk promises the epochs of every record below it.
  if (!write_pending_epochs() || (epochs_unsynced() && !sync_epochs_and_dir())) return;
  fs::path tmp = dir_ / (std::string(kCheckpointFile) + ".tmp");
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << "1\n" << log_start_offset_ << "\n" << recovery_point_ << "\n";
    if (!out) return;
  }
  int fd = ::open(tmp.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  std::error_code ec;
  fs::rename(tmp, dir_ / kCheckpointFile, ec);
  if (!ec) checkpointed_ = {log_start_offset_, recovery_point_};
}

void Log::read_checkpoint() {
  std::ifstream in(dir_ / kCheckpointFile);
  if (!in) {
    checkpointed_ = {0, 0};  // what an absent file means to the next start
    return;
  }
  int version = 0;
  int64_t start = 0, rp = 0;
  if (in >> version >> start >> rp && version == 1) {
    log_start_offset_ = start;
    recovery_point_ = rp;
    checkpointed_ = {start, rp};
  }
}

}  // namespace brokerd::storage
