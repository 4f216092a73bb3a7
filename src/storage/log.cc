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

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

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
    if (ends_with(name, ".log.swap")) return false;
    if (ends_with(name, ".deleted") || ends_with(name, ".tmp") || ends_with(name, ".cleaned") ||
        ends_with(name, ".swap")) {
      fs::remove(dir_ / name);
      return true;
    }
    if (ends_with(name, ".log")) {
      if (auto b = parse_segment_file_stem(name.substr(0, name.size() - 4))) bases.push_back(*b);
    }
    return false;
  });
  complete_interrupted_swaps(bases, names);
  // Index files whose segment is gone.
  for (const auto& name : names) {
    const bool offset_index = ends_with(name, ".index"), time_index = ends_with(name, ".timeindex");
    if (!offset_index && !time_index) continue;
    auto b = parse_segment_file_stem(name.substr(0, name.size() - (offset_index ? 6 : 10)));
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
  for (size_t i = 0; i < bases.size(); ++i) {
    bool last = i + 1 == bases.size();
    bool recover = !clean_shutdown && i >= recover_from;
    auto seg = Segment::open(dir_, bases[i], cfg_, last || recover, t);
    if (recover) {
      uint64_t cut = seg->recover(cfg_.max_message_bytes, &recovered_epochs_);
      if (cut > 0) {
        logger->warn("{}: recovered segment {} cut {} bytes of invalid data", dir_.string(), bases[i], cut);
        if (!last) {
          // Data after a torn segment cannot be trusted to follow on: drop it.
          for (size_t j = i + 1; j < bases.size(); ++j) {
            auto stem = dir_ / segment_file_stem(bases[j]);
            for (const char* ext : {".log", ".index", ".timeindex"}) fs::remove(stem.string() + ext);
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
  load_producer_state();
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

bool Log::should_roll(size_t incoming_bytes, int64_t incoming_max_ts, int64_t last_offset, int64_t now_ms) const {
  const Segment& s = active();
  if (s.empty()) return false;
  if (s.size() + incoming_bytes > static_cast<uint64_t>(cfg_.segment_bytes)) return true;
  if (s.time_waited_for_roll(now_ms, incoming_max_ts) > cfg_.segment_ms - s.roll_jitter_ms()) return true;
  if (s.indexes_full()) return true;
  return last_offset - s.base_offset() > INT32_MAX;
}

AppendResult Log::append(std::span<std::byte> batches, int32_t leader_epoch, int64_t now_ms, AppendOrigin origin) {
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
  ProducerAppend producer_append(producers_);
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

void Log::note_recovery() {
  module_logger("storage")->info("{}: appends succeed again after {} failed", dir_.string(), write_failures_);
  write_failures_ = 0;
  failures_unreported_ = 0;
}

ErrorCode Log::flush() {
  const int64_t leo = log_end_offset();
  const int64_t from = recovery_point_;
  FlushTarget t = flush_target();
  if (t.files.empty() && t.dir.empty() && t.offset == leo) return ErrorCode::none;  // nothing unsynced
  if (!sync_flush_target(t)) return ErrorCode::kafka_storage_error;
  mark_flushed(t.offset, t.dir_version);
  // The indexes of what just became durable too: a clean close trusts them at the next start.
  for (auto& [_, seg] : segments_)
    if (seg->next_offset() > from) seg->flush_indexes();
  return t.offset == leo ? ErrorCode::none : ErrorCode::kafka_storage_error;
}

bool Log::sync_epochs_and_dir() {
  const uint64_t version = dir_version_;
  if (epochs_unsynced()) {
    int fd = ::open((dir_ / kLeaderEpochFile).c_str(), O_RDONLY | O_CLOEXEC);
    bool ok = fd >= 0 && ::fdatasync(fd) == 0;
    if (fd >= 0) ::close(fd);
    if (!ok) return false;
  }
  int fd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  bool ok = fd >= 0 && ::fsync(fd) == 0;
  if (fd >= 0) ::close(fd);
  if (ok) dir_synced_version_ = version;
  return ok;
}

void Log::set_leader_epochs(std::string text) { epochs_pending_ = std::move(text); }

bool Log::persist_leader_epochs() { return write_pending_epochs() && (!dir_dirty() || sync_epochs_and_dir()); }

bool Log::write_pending_epochs() {
  if (!epochs_pending_) return true;
  const std::string& text = *epochs_pending_;
  const fs::path tmp = dir_ / (std::string(kLeaderEpochFile) + ".tmp");
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (fd >= 0) ::close(fd);
  std::error_code ec;
  if (ok) fs::rename(tmp, dir_ / kLeaderEpochFile, ec);
  if (!ok || ec) {
    module_logger("storage")->error("{}: cannot write {}", dir_.string(), kLeaderEpochFile);
    return false;
  }
  epochs_pending_.reset();
  epochs_version_ = ++dir_version_;
  return true;
}

std::optional<std::string> Log::read_leader_epochs() const {
  std::ifstream in(dir_ / kLeaderEpochFile);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

FlushTarget Log::flush_target() {
  FlushTarget t;
  t.offset = log_end_offset();
  // Records become durable: the epochs they belong to go with them.
  if (t.offset > recovery_point_ && !write_pending_epochs()) {
    t.offset = recovery_point_;
    return t;
  }
  for (const auto& [_, s] : segments_) {
    if (s->next_offset() <= recovery_point_) continue;
    try {
      t.files.push_back(s->file());
    } catch (const std::system_error&) {
      t.offset = std::min(t.offset, s->base_offset());  // durable only below what syncs
    }
  }
  if (dir_dirty()) {
    // The leader-epoch file first, then the directory: the entry of its rename and of
    // segments created since the last flush survive a power loss. It counts as synced only
    // once mark_flushed() says the sync succeeded. Both are opened by the sync, not here: a
    // round of thousands of targets must not hold thousands of descriptors while it waits.
    if (epochs_unsynced()) t.epochs_file = dir_ / kLeaderEpochFile;
    t.dir = dir_;
    t.dir_version = dir_version_;
  }
  return t;
}

namespace {
std::atomic<uint64_t> g_targets_synced{0};
}  // namespace

uint64_t flush_targets_synced() { return g_targets_synced.load(std::memory_order_relaxed); }

bool sync_flush_target(const FlushTarget& t) {
  g_targets_synced.fetch_add(1, std::memory_order_relaxed);
  bool ok = true;
  for (const auto& f : t.files) ok = ::fdatasync(f->fd()) == 0 && ok;
  auto sync_path = [](const fs::path& p, int flags) {
    int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | flags);
    bool synced = fd >= 0 && ::fsync(fd) == 0;
    if (fd >= 0) ::close(fd);
    return synced;
  };
  if (ok && !t.epochs_file.empty()) ok = sync_path(t.epochs_file, 0);
  if (ok && !t.dir.empty()) ok = sync_path(t.dir, O_DIRECTORY);
  return ok;
}

void Log::mark_dir_synced() { dir_synced_version_ = dir_version_; }

void Log::mark_flushed(int64_t offset, uint64_t dir_version) {
  recovery_point_ = std::max(recovery_point_, std::min(offset, log_end_offset()));
  dir_synced_version_ = std::max(dir_synced_version_, dir_version);
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

// ---- Compaction hooks -------------------------------------------------------------------

std::vector<SegmentSnapshot> Log::closed_segments() const {
  touch();
  std::vector<SegmentSnapshot> out;
  for (auto it = segments_.begin(); it != segments_.end() && std::next(it) != segments_.end(); ++it) {
    const Segment& s = *it->second;
    out.push_back(SegmentSnapshot{s.base_offset(), s.next_offset(), s.size(), s.largest_timestamp(), s.file()});
  }
  return out;
}

namespace {

void fsync_path(const fs::path& p) {
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// `<stem>.swap-end`: the first offset after the segments a compaction swap replaces.
constexpr const char* kSwapEndSuffix = ".swap-end";

bool write_swap_end(const std::string& stem, int64_t end) {
  const std::string text = std::to_string(end) + "\n";
  int fd = ::open((stem + kSwapEndSuffix).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

std::optional<int64_t> read_swap_end(const std::string& stem) {
  std::ifstream in(stem + kSwapEndSuffix);
  int64_t end = -1;
  if (in >> end && end >= 0) return end;
  return std::nullopt;
}

}  // namespace

namespace {
// Whether `seg` is still the very file a snapshot was taken of (a segment re-created at the
// same base offset is another file; one reopened after release_files() is the same).
bool same_file(const Segment& seg, const SegmentSnapshot& o) {
  if (seg.next_offset() != o.next_offset || seg.size() != o.size || !o.file) return false;
  struct stat a {}, b {};
  return ::fstat(o.file->fd(), &a) == 0 && ::stat(seg.log_path().c_str(), &b) == 0 && a.st_ino == b.st_ino &&
         a.st_dev == b.st_dev;
}
}  // namespace

bool Log::replace_segments(std::span<const SegmentSnapshot> old, int64_t now_ms, int crash_after_step) {
  touch();
  if (old.empty() || closed_) return false;
  // The segments must still be there, closed, contiguous and the very files the cleaner read.
  auto it = segments_.find(old.front().base_offset);
  for (const auto& o : old) {
    if (it == segments_.end() || it->first != o.base_offset || std::next(it) == segments_.end() ||
        !same_file(*it->second, o)) {
      return false;
    }
    ++it;
  }
  const int64_t base = old.front().base_offset;
  const std::string stem = (dir_ / segment_file_stem(base)).string();
  static constexpr const char* kExts[] = {".index", ".timeindex", ".log"};  // .log last: it commits
  for (const char* ext : kExts) {
    if (!fs::exists(stem + ext + ".cleaned")) return false;
  }
  // 0. Where the replaced range ends, durable before the swap commits: recovery cannot infer
  //    it from the swap's batches when the last replaced segments lost every record.
  if (!write_swap_end(stem, old.back().next_offset)) return false;
  fsync_path(dir_);
  // 1. .cleaned -> .swap. Once `.log.swap` exists, recovery finishes the swap.
  for (const char* ext : kExts) fs::rename(stem + ext + ".cleaned", stem + ext + ".swap");
  fsync_path(dir_);
  if (crash_after_step == 1) return true;
  // 2. The old segments leave the log (their files become .deleted).
  for (const auto& o : old) delete_segment(segments_.find(o.base_offset), now_ms);
  if (crash_after_step == 2) return true;
  // 3. .swap -> final names, the .log first (a crash after it leaves indexes to rebuild).
  fs::rename(stem + ".log.swap", stem + ".log");
  fs::rename(stem + ".index.swap", stem + ".index");
  fs::rename(stem + ".timeindex.swap", stem + ".timeindex");
  fsync_path(dir_);
  fs::remove(stem + kSwapEndSuffix);  // without a `.log.swap` beside it, recovery ignores it
  auto seg = Segment::open(dir_, base, cfg_, false, now_ms);
  if (!seg->load_state()) {
    seg.reset();
    seg = Segment::open(dir_, base, cfg_, true, now_ms);
    seg->recover(cfg_.max_message_bytes);
    seg->make_inactive();
  }
  segments_.emplace(base, std::move(seg));
  return true;
}

void Log::complete_interrupted_swaps(std::vector<int64_t>& bases, const std::vector<std::string>& names) {
  auto logger = module_logger("storage");
  std::vector<int64_t> swaps;
  for (const auto& name : names) {
    if (!ends_with(name, ".log.swap")) continue;
    if (auto b = parse_segment_file_stem(name.substr(0, name.size() - 9))) swaps.push_back(*b);
    else fs::remove(dir_ / name);
  }
  for (int64_t base : swaps) {
    const std::string stem = (dir_ / segment_file_stem(base)).string();
    // The swap file was synced before it was renamed: read where its batches end.
    int64_t next = base;
    int fd = ::open((stem + ".log.swap").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    std::byte h[batch_layout::header_size];
    for (off_t pos = 0; ::pread(fd, h, sizeof h, pos) == static_cast<ssize_t>(sizeof h);) {
      RecordBatchView v(std::span<const std::byte>(h, sizeof h));
      if (v.magic() != 2 || v.batch_length() < static_cast<int32_t>(batch_layout::header_size - batch_layout::log_overhead)) break;
      next = std::max(next, v.last_offset() + 1);
      pos += static_cast<off_t>(v.size());
    }
    ::close(fd);
    // The recorded end of the replaced range covers old segments that cleaning emptied.
    if (auto end = read_swap_end(stem)) next = std::max(next, *end);
    // Every old segment the swap replaces goes; the swap takes the first one's name.
    std::erase_if(bases, [&](int64_t b) {
      if (b != base && (b < base || b >= next)) return false;
      auto old = (dir_ / segment_file_stem(b)).string();
      for (const char* ext : {".log", ".index", ".timeindex"}) fs::remove(old + ext);
      return true;
    });
    fs::remove(stem + ".index");
    fs::remove(stem + ".timeindex");
    fs::rename(stem + ".log.swap", stem + ".log");
    bases.push_back(base);
    logger->warn("{}: completed an interrupted compaction swap of segment {}", dir_.string(), base);
  }
  std::sort(bases.begin(), bases.end());
  if (!swaps.empty()) fsync_path(dir_);
  // Range files of finished swaps, or of swaps that never committed.
  for (const auto& name : names)
    if (ends_with(name, kSwapEndSuffix)) fs::remove(dir_ / name);
}

}  // namespace brokerd::storage
