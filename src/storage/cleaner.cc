#include "brokerd/storage/cleaner.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <system_error>
#include <thread>
#include <unordered_set>

#include "brokerd/storage/offset_index.h"
#include "brokerd/storage/offset_map.h"
#include "brokerd/storage/time_index.h"
#include "cleaner_batch.h"
#include "varint.h"

namespace brokerd::storage {

namespace fs = std::filesystem;
namespace L = batch_layout;
using detail::load_be32;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Sleeps the cleaning thread (never a reactor) to keep its I/O under a rate.
class Throttler {
 public:
  explicit Throttler(double bytes_per_second) : rate_(bytes_per_second), start_(std::chrono::steady_clock::now()) {}
  void add(uint64_t bytes) {
    if (rate_ <= 0) return;
    total_ += bytes;
    double due = static_cast<double>(total_) / rate_;
    double elapsed = seconds_since(start_);
    if (due > elapsed) std::this_thread::sleep_for(std::chrono::duration<double>(due - elapsed));
  }

 private:
  double rate_;
  uint64_t total_ = 0;
  std::chrono::steady_clock::time_point start_;
};

// Reads the batches of a closed segment in order, through a buffer.
class SegmentScanner {
 public:
  SegmentScanner(const SegmentSnapshot& s, Throttler& throttle) : seg_(s), throttle_(throttle) {}

  // The next whole batch, or an empty span at the end. Sets error() on a torn or bad batch.
  std::span<const std::byte> next() {
    if (pos_ >= seg_.size) return {};
    if (!fill(L::header_size)) return fail("truncated batch header");
    int32_t len = static_cast<int32_t>(load_be32(buf_.data() + at_ + L::batch_length));
    if (len < static_cast<int32_t>(L::header_size - L::log_overhead) || static_cast<int8_t>(buf_[at_ + L::magic]) != 2)
      return fail("bad batch header");
    size_t size = static_cast<size_t>(len) + L::log_overhead;
    if (!fill(size)) return fail("batch extends past the segment");
    std::span<const std::byte> b(buf_.data() + at_, size);
    at_ += size;
    pos_ += size;
    return b;
  }
  const std::string& error() const { return error_; }
  uint64_t bytes_read() const { return read_; }

 private:
  std::span<const std::byte> fail(const char* why) {
    error_ = std::string(why) + " at position " + std::to_string(pos_);
    pos_ = seg_.size;
    return {};
  }
  // Ensures `n` bytes from the current batch are buffered.
  bool fill(size_t n) {
    if (pos_ + n > seg_.size) return false;
    if (at_ + n <= have_) return true;
    size_t keep = have_ - at_;
    if (keep > 0) std::memmove(buf_.data(), buf_.data() + at_, keep);  // never with a null buffer
    at_ = 0;
    have_ = keep;
    size_t want = std::max<size_t>(n, kChunk);
    if (buf_.size() < want) buf_.resize(want);
    uint64_t file_pos = pos_ + have_;
    size_t to_read = std::min<uint64_t>(buf_.size() - have_, seg_.size - file_pos);
    while (have_ < n && to_read > 0) {
      ssize_t r = ::pread(seg_.file->fd(), buf_.data() + have_, to_read, static_cast<off_t>(file_pos));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      have_ += static_cast<size_t>(r);
      file_pos += static_cast<uint64_t>(r);
      to_read -= static_cast<size_t>(r);
      read_ += static_cast<uint64_t>(r);
      throttle_.add(static_cast<uint64_t>(r));
    }
    return have_ >= n;
  }

  static constexpr size_t kChunk = 1 << 20;
  const SegmentSnapshot& seg_;
  Throttler& throttle_;
  Bytes buf_;
  size_t at_ = 0, have_ = 0;
  uint64_t pos_ = 0, read_ = 0;
  std::string error_;
};

// Writes one cleaned segment: `<stem>.log.cleaned` with its `.index.cleaned` and
// `.timeindex.cleaned`, indexed as Segment indexes appended batches.
class CleanedWriter {
 public:
  CleanedWriter(const fs::path& dir, int64_t base, const LogConfig& cfg, Throttler& throttle)
      : stem_((dir / segment_file_stem(base)).string()), cfg_(cfg), throttle_(throttle) {
    remove_files();
    fd_ = ::open((stem_ + ".log.cleaned").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "create " + stem_ + ".log.cleaned");
    size_t max_index = static_cast<size_t>(cfg.segment_index_bytes);
    offsets_ = std::make_unique<OffsetIndex>(stem_ + ".index.cleaned", base, max_index, true);
    times_ = std::make_unique<TimeIndex>(stem_ + ".timeindex.cleaned", base, max_index, true);
  }
  ~CleanedWriter() {
    if (fd_ >= 0) ::close(fd_);
  }

  void append(std::span<const std::byte> batch) {
    // Index pages get their blocks before they are written (see IndexFile), else a full
    // disk would fault; the clean is abandoned like on any failed write.
    int err = offsets_->reserve(1);
    if (err == 0) err = times_->reserve(2);
    if (err != 0) throw std::system_error(err, std::generic_category(), "index " + stem_ + ".cleaned");
    RecordBatchView v(batch);
    if (v.max_timestamp() > max_ts_) {
      max_ts_ = v.max_timestamp();
      offset_of_max_ts_ = v.last_offset();
    }
    if (since_index_ > static_cast<uint64_t>(cfg_.index_interval_bytes)) {
      offsets_->append(v.last_offset(), static_cast<uint32_t>(size_));
      if (max_ts_ >= 0) times_->maybe_append(max_ts_, offset_of_max_ts_);
      since_index_ = 0;
    }
    since_index_ += batch.size();
    size_ += batch.size();
    buf_.insert(buf_.end(), batch.begin(), batch.end());
    if (buf_.size() >= (1u << 20)) drain();
  }

  uint64_t size() const { return size_; }

  // Everything durable before the swap may rename it.
  void finish() {
    drain();
    if (::fdatasync(fd_) != 0) throw std::system_error(errno, std::generic_category(), "fdatasync " + stem_);
    ::close(fd_);
    fd_ = -1;
    if (max_ts_ >= 0) times_->maybe_append(max_ts_, offset_of_max_ts_);
    offsets_->flush();
    times_->flush();
    offsets_->close();
    times_->close();
    for (const char* ext : {".index.cleaned", ".timeindex.cleaned"}) {
      int fd = ::open((stem_ + ext).c_str(), O_RDONLY | O_CLOEXEC);
      if (fd >= 0) {
        ::fsync(fd);
        ::close(fd);
      }
    }
  }

  // Nothing worth installing was written: the files go, unsynced.
  void abandon() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    offsets_->close();
    times_->close();
    remove_files();
  }

  void remove_files() const {
    std::error_code ec;
    for (const char* ext : {".log.cleaned", ".index.cleaned", ".timeindex.cleaned"}) fs::remove(stem_ + ext, ec);
  }

 private:
  void drain() {
    size_t done = 0;
    while (done < buf_.size()) {
      ssize_t n = ::write(fd_, buf_.data() + done, buf_.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw std::system_error(n < 0 ? errno : EIO, std::generic_category(), "write " + stem_);
      done += static_cast<size_t>(n);
    }
    throttle_.add(buf_.size());
    buf_.clear();
  }

  std::string stem_;
  LogConfig cfg_;
  Throttler& throttle_;
  int fd_ = -1;
  std::unique_ptr<OffsetIndex> offsets_;
  std::unique_ptr<TimeIndex> times_;
  Bytes buf_;
  uint64_t size_ = 0, since_index_ = 0;
  int64_t max_ts_ = -1, offset_of_max_ts_ = -1;
};

// Consecutive segments whose merged result fits one segment and its indexes.
std::vector<std::vector<SegmentSnapshot>> group_by_size(const std::vector<SegmentSnapshot>& segs, const LogConfig& cfg) {
  std::vector<std::vector<SegmentSnapshot>> groups;
  uint64_t interval = static_cast<uint64_t>(std::max(cfg.index_interval_bytes, 1));
  uint64_t bytes = 0;
  for (const auto& s : segs) {
    bool fits = false;
    if (!groups.empty()) {
      uint64_t merged = bytes + s.size;
      uint64_t index_bytes = (merged / interval + groups.back().size() + 2) * TimeIndex::kEntrySize;
      fits = merged <= static_cast<uint64_t>(cfg.segment_bytes) &&
             index_bytes <= static_cast<uint64_t>(cfg.segment_index_bytes) &&
             s.next_offset - groups.back().front().base_offset <= INT32_MAX;
    }
    if (fits) {
      groups.back().push_back(s);
      bytes += s.size;
    } else {
      groups.push_back({s});
      bytes = s.size;
    }
  }
  return groups;
}

}  // namespace

CleanerCheckpoint read_cleaner_checkpoint(const fs::path& dir) {
  CleanerCheckpoint c;
  std::ifstream in(dir / kCleanerCheckpointFile);
  int version = 0;
  int64_t dirty = 0, horizon = -1;
  if (in >> version >> dirty >> horizon && version == 1) {
    c.first_dirty_offset = dirty;
    c.next_horizon_ms = horizon;
  }
  return c;
}

void write_cleaner_checkpoint(const fs::path& dir, const CleanerCheckpoint& c) {
  // Losing it costs one extra pass, never data: no fsync.
  fs::path tmp = dir / (std::string(kCleanerCheckpointFile) + ".tmp");
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << "1\n" << c.first_dirty_offset << "\n" << c.next_horizon_ms << "\n";
    if (!out) return;
  }
  std::error_code ec;
  fs::rename(tmp, dir / kCleanerCheckpointFile, ec);
}

CleaningInput snapshot_for_cleaning(const Log& log, const CleanerCheckpoint& checkpoint, int64_t high_watermark) {
  CleaningInput in;
  in.high_watermark = high_watermark;
  in.dir = log.dir();
  in.config = log.config();
  in.segments = log.closed_segments();
  in.log_start_offset = log.log_start_offset();
  in.checkpoint = checkpoint;
  in.aborted = log.aborted_transactions(log.log_start_offset(), high_watermark);
  const auto& producers = log.producer_state().producers();
  if (!producers.empty()) {
    in.producer_last_offsets.emplace();
    for (const auto& [pid, entry] : producers) {
      if (entry.last_offset() >= 0) (*in.producer_last_offsets)[pid] = entry.last_offset();
    }
  }
  return in;
}

CleanableRange assess(const CleaningInput& in, int64_t now_ms) {
  CleanableRange r;
  if (in.segments.empty()) return r;
  const LogConfig& cfg = in.config;
  const int64_t first = std::max(in.log_start_offset, in.segments.front().base_offset);
  const int64_t closed_end = in.segments.back().next_offset;
  r.first_dirty = in.checkpoint.first_dirty_offset;
  if (r.first_dirty < first || r.first_dirty > closed_end) r.first_dirty = first;  // truncated or new
  r.first_uncleanable = std::min(closed_end, in.high_watermark);
  const SegmentSnapshot* first_dirty_seg = nullptr;
  for (const auto& s : in.segments) {
    if (s.next_offset <= r.first_dirty && s.base_offset < r.first_dirty) {
      r.clean_bytes += s.size;
      continue;
    }
    if (s.base_offset >= r.first_uncleanable) break;  // uncommitted
    // min.compaction.lag.ms: a segment holding records younger than the lag stays dirty.
    if (cfg.min_compaction_lag_ms > 0 && now_ms - s.largest_timestamp < cfg.min_compaction_lag_ms) {
      r.first_uncleanable = std::max(s.base_offset, r.first_dirty);
      break;
    }
    if (!first_dirty_seg) first_dirty_seg = &s;
    r.dirty_bytes += s.size;
  }
  uint64_t total = r.clean_bytes + r.dirty_bytes;
  r.dirty_ratio = total ? static_cast<double>(r.dirty_bytes) / static_cast<double>(total) : 0.0;
  // max.compaction.lag.ms: measured from the first dirty batch's timestamp.
  if (first_dirty_seg && cfg.max_compaction_lag_ms < INT64_MAX && first_dirty_seg->size >= L::header_size) {
    std::byte h[L::header_size];
    if (::pread(first_dirty_seg->file->fd(), h, sizeof h, 0) == static_cast<ssize_t>(sizeof h)) {
      int64_t ts = RecordBatchView(std::span<const std::byte>(h, sizeof h)).max_timestamp();
      if (ts < 0) ts = first_dirty_seg->largest_timestamp;
      r.max_lag_exceeded = ts >= 0 && now_ms - ts > cfg.max_compaction_lag_ms;
    }
  }
  r.horizon_due = in.checkpoint.next_horizon_ms >= 0 && now_ms >= in.checkpoint.next_horizon_ms;
  bool dirty = r.dirty_bytes > 0 && r.first_uncleanable > r.first_dirty;
  r.should_clean = (dirty && (r.dirty_ratio > cfg.min_cleanable_dirty_ratio || r.max_lag_exceeded)) || r.horizon_due;
  return r;
}

CleaningResult clean(const CleaningInput& in, const CleanableRange& range, int64_t now_ms, const CleanerOptions& options) {
  auto t0 = std::chrono::steady_clock::now();
  CleaningResult res;
  res.dir = in.dir;
  res.next_checkpoint = in.checkpoint;
  Throttler throttle(options.io_max_bytes_per_second);

  // 1. The offset map over the dirty range, sized to it (within the dedupe buffer).
  uint64_t want = (range.dirty_bytes / 8 + 1024) * OffsetMap::kSlotBytes;
  OffsetMap map(std::min<uint64_t>(options.dedupe_buffer_bytes, static_cast<uint64_t>(static_cast<double>(want) / options.load_factor) + 1),
                options.load_factor);
  std::unordered_map<int64_t, int64_t> dirty_producers;  // pid -> last offset of its last batch seen
  // Aborted transactions by producer: (first offset, marker offset).
  std::unordered_map<int64_t, std::vector<std::pair<int64_t, int64_t>>> aborted;
  for (const auto& t : in.aborted) aborted[t.producer_id].emplace_back(t.first_offset, t.last_offset);
  auto in_aborted_txn = [&](const RecordBatchView& b) {
    if (!b.is_transactional() || b.is_control() || b.producer_id() < 0) return false;
    auto it = aborted.find(b.producer_id());
    if (it == aborted.end()) return false;
    return std::any_of(it->second.begin(), it->second.end(), [&](const auto& r) {
      return r.first <= b.base_offset() && b.last_offset() < r.second;
    });
  };
  int64_t end = range.first_uncleanable;
  bool stopped = false;
  for (const auto& s : in.segments) {
    if (stopped || s.base_offset >= range.first_uncleanable) break;
    if (s.next_offset <= range.first_dirty) continue;
    SegmentScanner scan(s, throttle);
    while (true) {
      auto bytes = scan.next();
      if (bytes.empty()) break;
      if (options.abort && options.abort->load()) {
        res.error = "aborted";
        return res;
      }
      RecordBatchView b(bytes);
      if (b.last_offset() < range.first_dirty) continue;
      if (b.last_offset() >= range.first_uncleanable) break;
      if (b.producer_id() >= 0) dirty_producers[b.producer_id()] = b.last_offset();
      if (b.is_control() || in_aborted_txn(b)) continue;  // aborted records never shadow a key
      if (map.size() + static_cast<size_t>(std::max(b.records_count(), 0)) > map.capacity()) {
        if (map.size() == 0) {
          res.error = "dedupe buffer too small for one batch of " + std::to_string(b.records_count()) + " records";
          return res;
        }
        end = b.base_offset();
        stopped = true;
        break;
      }
      RecordReader reader(b, SIZE_MAX / 2);
      Record rec;
      while (reader.next(rec)) {
        if (rec.key) map.put(*rec.key, rec.offset);
      }
      if (reader.error() != ErrorCode::none) {
        res.error = "undecodable batch at offset " + std::to_string(b.base_offset());
        return res;
      }
    }
    res.stats.dirty_bytes += scan.bytes_read();
    if (!scan.error().empty()) {
      res.error = "segment " + std::to_string(s.base_offset) + ": " + scan.error();
      return res;
    }
  }
  end = std::max(end, range.first_dirty);
  res.next_checkpoint.first_dirty_offset = end;
  res.next_checkpoint.next_horizon_ms = -1;

  // 2. Rewrite every closed segment below `end`, merged in groups.
  std::vector<SegmentSnapshot> targets;
  for (const auto& s : in.segments) {
    if (s.base_offset < end) targets.push_back(s);
  }
  detail::BatchFilter filter;
  filter.map = &map;
  filter.end_offset = end;
  filter.now_ms = now_ms;
  filter.delete_retention_ms = in.config.delete_retention_ms;
  Bytes out, scratch, body;
  detail::BatchFilterStats fstats;
  std::unordered_set<int64_t> txn_data_kept;  // producers whose current transaction kept data
  try {
    for (auto& group : group_by_size(targets, in.config)) {
      CleanedWriter writer(in.dir, group.front().base_offset, in.config, throttle);
      res.groups.push_back(CleanedGroup{group});
      bool changed = group.size() > 1;  // merged files are worth a swap by themselves
      for (const auto& s : group) {
        SegmentScanner scan(s, throttle);
        while (true) {
          auto bytes = scan.next();
          if (bytes.empty()) break;
          if (options.abort && options.abort->load()) throw std::runtime_error("aborted");
          RecordBatchView b(bytes);
          int64_t pid = b.producer_id();
          if (pid >= 0) {
            if (in.producer_last_offsets) {
              auto it = in.producer_last_offsets->find(pid);
              filter.keep_if_empty = it != in.producer_last_offsets->end() && it->second == b.last_offset();
            } else {
              auto it = dirty_producers.find(pid);
              filter.keep_if_empty = it == dirty_producers.end() || it->second == b.last_offset();
            }
          } else {
            filter.keep_if_empty = false;
          }
          filter.aborted = in_aborted_txn(b);
          // A marker goes (after delete.retention.ms) once no data of its transaction is left
          // before it; any batch of the transaction kept here, even empty, keeps it.
          filter.marker_removable = false;
          if (b.is_control() && pid >= 0 && b.base_offset() < end) {
            filter.marker_removable = txn_data_kept.erase(pid) == 0;
            filter.keep_if_empty = false;
          }
          ErrorCode err = ErrorCode::none;
          out.clear();
          auto outcome = detail::filter_batch(b, filter, out, scratch, body, fstats, err);
          if (b.is_transactional() && !b.is_control() && pid >= 0 && outcome != detail::FilterOutcome::dropped)
            txn_data_kept.insert(pid);
          if (err != ErrorCode::none) throw std::runtime_error("cannot rewrite batch at offset " + std::to_string(b.base_offset()));
          if (outcome == detail::FilterOutcome::keep_whole) writer.append(bytes);
          else if (outcome == detail::FilterOutcome::rewritten) writer.append(out), ++res.stats.batches_rewritten;
          changed = changed || outcome != detail::FilterOutcome::keep_whole;
          if (fstats.kept_horizon_ms >= 0) {
            int64_t& h = res.next_checkpoint.next_horizon_ms;
            h = h < 0 ? fstats.kept_horizon_ms : std::min(h, fstats.kept_horizon_ms);
          }
        }
        res.stats.bytes_read += scan.bytes_read();
        if (!scan.error().empty()) throw std::runtime_error("segment " + std::to_string(s.base_offset) + ": " + scan.error());
      }
      if (!changed) {
        // A lone segment the pass keeps as it is: no copy to sync and swap in.
        writer.abandon();
        res.groups.pop_back();
        ++res.stats.segments_unchanged;
        continue;
      }
      writer.finish();
      res.stats.bytes_written += writer.size();
    }
  } catch (const std::exception& e) {
    res.error = e.what();
    discard(res);
    res.groups.clear();
  }
  res.stats.records_read = fstats.records_read;
  res.stats.records_kept = fstats.records_kept;
  res.stats.tombstones_removed = fstats.tombstones_removed;
  res.stats.seconds = seconds_since(t0);
  return res;
}

void discard(const CleaningResult& result) {
  std::error_code ec;
  for (const auto& g : result.groups) {
    auto stem = (result.dir / segment_file_stem(g.replaced.front().base_offset)).string();
    for (const char* ext : {".log.cleaned", ".index.cleaned", ".timeindex.cleaned"}) fs::remove(stem + ext, ec);
  }
}

bool install(Log& log, const CleaningResult& result, int64_t now_ms) {
  bool all = true;
  for (const auto& g : result.groups) {
    if (!log.replace_segments(g.replaced, now_ms)) {
      all = false;
      CleaningResult one;
      one.dir = result.dir;
      one.groups.push_back(g);
      discard(one);
    }
  }
  return all;
}

std::optional<CleanerStats> clean_log_now(Log& log, CleanerCheckpoint& checkpoint, int64_t now_ms,
                                          const CleanerOptions& options, bool force) {
  // Everything is committed; ongoing transactions still hold the bound back.
  const int64_t bound = std::max(log.first_unstable_offset().value_or(log.log_end_offset()), log.log_start_offset());
  auto in = snapshot_for_cleaning(log, checkpoint, bound);
  auto range = assess(in, now_ms);
  if (!range.should_clean && !(force && !in.segments.empty())) return std::nullopt;
  auto res = clean(in, range, now_ms, options);
  if (!res.error.empty()) throw std::runtime_error("cleaning " + in.dir.string() + " failed: " + res.error);
  if (install(log, res, now_ms)) {
    checkpoint = res.next_checkpoint;
    write_cleaner_checkpoint(log.dir(), checkpoint);
  }
  return res.stats;
}

}  // namespace brokerd::storage
