#include "brokerd/raft/disk_log.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "brokerd/common/clock.h"
#include "brokerd/raft/disk_io.h"
#include "brokerd/storage/batch_builder.h"
#include "brokerd/storage/log.h"
#include "brokerd/storage/record_batch.h"

namespace brokerd::raft {

namespace fs = std::filesystem;

namespace {

Bytes slurp(const protocol::Records& records) {
  Bytes out;
  for (const auto& part : records.parts) {
    if (const auto* s = std::get_if<SharedBytes>(&part)) {
      out.insert(out.end(), s->data.begin(), s->data.end());
      continue;
    }
    const auto& f = std::get<FileSlice>(part);
    const size_t at = out.size();
    out.resize(at + f.size);
    for (size_t done = 0; done < f.size;) {
      ssize_t n = ::pread(f.file->fd(), out.data() + at + done, f.size - done,
                          static_cast<off_t>(f.position + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw std::system_error(errno, std::generic_category(), "raft log read");
      if (n == 0) throw std::runtime_error("raft log read past the end of a segment");
      done += static_cast<size_t>(n);
    }
  }
  return out;
}

// Calls f(view) for each whole batch in `bytes`.
template <typename F>
void for_each_batch(std::span<const std::byte> bytes, F&& f) {
  size_t pos = 0;
  while (pos + storage::batch_layout::header_size <= bytes.size()) {
    storage::RecordBatchView v(bytes.subspan(pos));
    if (v.batch_length() <= 0 || pos + v.size() > bytes.size()) break;
    f(v);
    pos += v.size();
  }
}

std::string as_string(std::optional<std::span<const std::byte>> b) {
  if (!b) return {};
  return std::string(reinterpret_cast<const char*>(b->data()), b->size());
}

}  // namespace

DiskRaftLog::DiskRaftLog(fs::path dir, DiskRaftLogOptions options)
    : dir_(std::move(dir)), options_(options) {}

DiskRaftLog::~DiskRaftLog() = default;

std::unique_ptr<DiskRaftLog> DiskRaftLog::open(fs::path dir, DiskRaftLogOptions options) {
  fs::create_directories(dir);
  std::unique_ptr<DiskRaftLog> log(new DiskRaftLog(std::move(dir), options));
  log->load();
  return log;
}

void DiskRaftLog::open_storage() {
  storage::LogConfig cfg;
  cfg.segment_bytes = options_.segment_bytes;
  cfg.max_message_bytes = std::max(options_.max_batch_bytes, options_.max_entry_bytes) + 4096;
  cfg.retention_ms = -1;  // only snapshots shorten the raft log
  cfg.retention_bytes = -1;
  cfg.file_delete_delay_ms = 0;  // nobody reads raft segments through file slices later
  cfg.budgeted_files = false;
  // A segment's blocks are taken when it is created: a file system that fills up later (other
  // logs, anything else on the disk) does not stop the quorum at its next append.
  cfg.preallocate = true;
  // Always recover the tail: the metadata log is small and a raft log must never trust bytes
  // past the last fsync without checking them.
  log_ = storage::Log::open(dir_, cfg, /*clean_shutdown=*/false);
}

void DiskRaftLog::load() {
  bool resetting = false;
  if (auto text = read_whole_file(dir_ / kStartFile)) {
    std::istringstream in(*text);
    int version = 0, flag = 0;
    if (!(in >> version >> start_ >> base_epoch_ >> flag) || version != 1)
      throw std::runtime_error("unreadable " + (dir_ / kStartFile).string());
    resetting = flag != 0;
  }
  if (resetting) {
    // A reset was interrupted: whatever remains of the old log is not to be used.
    wipe_to(start_);
    open_storage();
    write_start_file({start_, base_epoch_}, false);
  } else {
    open_storage();
  }
  finish_pending_truncation();
  if (start_ > log_->log_end_offset()) {
    // Cut at a snapshot past entries that were never flushed and are now gone.
    reset({start_, base_epoch_});
  } else if (log_->log_start_offset() < start_) {
    log_->delete_records_before(start_, wall_clock_ms());
  } else if (log_->log_start_offset() > start_) {
    throw std::runtime_error(dir_.string() + ": segments below the raft log start are missing");
  }
  rebuild_epoch_cache();
  if (options_.track_durable_end) lose_unsynced_tail();
}

void DiskRaftLog::note_durable_end(Offset end) {
  if (!options_.track_durable_end || end == durable_end_) return;
  durable_end_ = end;
  std::ofstream(dir_ / kDurableEndFile, std::ios::trunc) << end << "\n";
}

void DiskRaftLog::lose_unsynced_tail() {
  if (auto text = read_whole_file(dir_ / kDurableEndFile)) {
    std::istringstream in(*text);
    Offset end = -1;
    if (in >> end) durable_end_ = end;
  }
  if (!fs::exists(dir_ / kPowerLossFile)) return;
  // What no real fsync covered is gone; with no record at all, nothing past the log start is.
  const Offset before = end_offset();
  if (durable_end_ < before) truncate_to(std::max(durable_end_, start_));
  power_loss_ = PowerLoss{before, end_offset()};
  fs::remove(dir_ / kPowerLossFile);
  fsync_dir(dir_);
  note_durable_end(std::min(std::max(durable_end_, start_), end_offset()));
}

void DiskRaftLog::write_start_file(OffsetAndEpoch start, bool resetting) {
  write_file_durably(dir_ / kStartFile, "1 " + std::to_string(start.offset) + " " +
                                            std::to_string(start.epoch) + " " +
                                            (resetting ? "1" : "0") + "\n");
}

void DiskRaftLog::wipe_to(Offset start) {
  if (log_) {
    log_->close();
    log_.reset();
  }
  for (const auto& e : fs::directory_iterator(dir_)) {
    if (e.path().filename() != kStartFile) fs::remove_all(e.path());
  }
  // The storage log begins where its checkpoint says when it has no segment (the
  // `partition.checkpoint` layout of src/storage/README.md: version, log start, recovery point).
  const std::string s = std::to_string(start);
  write_file_durably(dir_ / storage::Log::kCheckpointFile, "1\n" + s + "\n" + s + "\n");
}

void DiskRaftLog::rebuild_epoch_cache() {
  epochs_.clear();
  std::array<std::byte, storage::batch_layout::header_size> header;
  for (const storage::Segment* seg : log_->segments()) {
    uint64_t pos = 0;
    while (pos < seg->size()) {
      auto b = seg->batch_at(pos);
      if (!b || !seg->read_bytes(pos, header)) break;
      pos += b->size;
      if (b->last_offset < start_) continue;
      const Epoch epoch = storage::RecordBatchView(header).partition_leader_epoch();
      if (!epochs_.empty() && epochs_.back().epoch == epoch) continue;
      if (epoch < (epochs_.empty() ? base_epoch_ : epochs_.back().epoch))
        throw std::runtime_error(dir_.string() + ": leader epochs go backwards at offset " +
                                 std::to_string(b->base_offset));
      epochs_.push_back({epoch, std::max<Offset>(b->base_offset, start_)});
    }
  }
}

Offset DiskRaftLog::end_offset() const { return log_->log_end_offset(); }

Offset DiskRaftLog::flushed_end_offset() const {
  return std::max(start_, std::min(log_->recovery_point(), end_offset()));
}

Epoch DiskRaftLog::last_epoch() const { return epochs_.empty() ? base_epoch_ : epochs_.back().epoch; }

std::optional<Epoch> DiskRaftLog::epoch_at(Offset offset) const {
  if (offset == start_ - 1) return base_epoch_;
  if (offset < start_ || offset >= end_offset()) return std::nullopt;
  auto it = std::upper_bound(epochs_.begin(), epochs_.end(), offset,
                             [](Offset o, const EpochStart& e) { return o < e.start_offset; });
  return std::prev(it)->epoch;
}

OffsetAndEpoch DiskRaftLog::end_offset_for_epoch(Epoch epoch) const {
  if (epoch < base_epoch_) return {-1, -1};
  auto it = std::upper_bound(epochs_.begin(), epochs_.end(), epoch,
                             [](Epoch e, const EpochStart& s) { return e < s.epoch; });
  if (it == epochs_.begin()) return {start_, base_epoch_};
  const Offset end = it == epochs_.end() ? end_offset() : it->start_offset;
  return {end, std::prev(it)->epoch};
}

std::vector<Entry> DiskRaftLog::read(Offset from, size_t max_entries) const {
  return read_batches(std::max(from, start_), max_entries, false);
}

std::vector<Entry> DiskRaftLog::read_batches(Offset from, size_t max_entries,
                                             bool include_below_start) const {
  std::vector<Entry> out;
  const Offset end = end_offset();
  const int32_t chunk = std::max(options_.max_batch_bytes, 64 * 1024);
  while (out.size() < max_entries && from < end) {
    // The storage log refuses reads below its start; a batch straddling it starts earlier.
    auto res = log_->read(std::max(from, log_->log_start_offset()), chunk, true, end);
    if (res.error != storage::ErrorCode::none)
      throw std::runtime_error(dir_.string() + ": raft log read failed at " + std::to_string(from));
    const Bytes bytes = slurp(res.records);
    Offset next = from;
    for_each_batch(bytes, [&](const storage::RecordBatchView& v) {
      if (out.size() >= max_entries) return;
      storage::RecordReader reader(v);
      storage::Record r;
      while (out.size() < max_entries && reader.next(r)) {
        if (r.offset < from || (!include_below_start && r.offset < start_)) continue;
        out.push_back(Entry{r.offset, v.partition_leader_epoch(), v.is_control(), as_string(r.value)});
      }
      if (reader.error() != storage::ErrorCode::none)
        throw std::runtime_error(dir_.string() + ": undecodable raft batch at " +
                                 std::to_string(v.base_offset()));
      next = std::max(next, v.next_offset());
    });
    if (next == from) break;  // no progress: nothing more can be read
    from = next;
  }
  return out;
}

void DiskRaftLog::append(const std::vector<Entry>& entries) {
  Offset expected = end_offset();
  Epoch epoch = last_epoch();
  for (const auto& e : entries) {
    if (e.offset != expected++) throw std::logic_error("raft log append out of order");
    if (e.epoch < epoch) throw std::logic_error("raft log append with older epoch");
    if (e.payload.size() > static_cast<size_t>(options_.max_entry_bytes))
      throw std::logic_error("raft entry larger than max_entry_bytes");
    epoch = e.epoch;
  }
  size_t i = 0;
  while (i < entries.size()) {
    size_t j = i + 1, bytes = entries[i].payload.size();
    while (j < entries.size() && entries[j].epoch == entries[i].epoch &&
           entries[j].control == entries[i].control &&
           bytes + entries[j].payload.size() <= static_cast<size_t>(options_.max_batch_bytes)) {
      bytes += entries[j].payload.size();
      ++j;
    }
    append_batch(&entries[i], j - i);
    i = j;
  }
}

void DiskRaftLog::append_batch(const Entry* first, size_t count) {
  const int64_t now = wall_clock_ms();
  storage::BatchOptions opts;
  opts.base_offset = first->offset;
  opts.partition_leader_epoch = first->epoch;
  opts.control = first->control;
  storage::BatchBuilder builder(opts);
  for (size_t k = 0; k < count; ++k)
    builder.add(now, std::nullopt, storage::as_bytes(first[k].payload));
  Bytes batch = builder.build();
  auto res = log_->append(batch, first->epoch, now, storage::AppendOrigin::internal);
  if (res.error != storage::ErrorCode::none)
    throw std::runtime_error(dir_.string() + ": raft log append failed: " + res.message);
  if (res.base_offset != first->offset)
    throw std::runtime_error(dir_.string() + ": storage assigned offset " +
                             std::to_string(res.base_offset) + " to raft offset " +
                             std::to_string(first->offset));
  if (epochs_.empty() || epochs_.back().epoch != first->epoch)
    epochs_.push_back({first->epoch, first->offset});
}

void DiskRaftLog::truncate_to(Offset end) {
  end = std::max(end, start_);
  if (end >= end_offset()) return;
  // The storage log cuts whole batches. When `end` falls inside one, its prefix is saved
  // aside durably first, then the batch is cut and the prefix written back.
  auto res = log_->read(std::max(end, log_->log_start_offset()), 1, true, end_offset());
  const Bytes bytes = slurp(res.records);
  if (bytes.size() < storage::batch_layout::header_size)
    throw std::runtime_error(dir_.string() + ": no batch holds offset " + std::to_string(end));
  storage::RecordBatchView v(bytes);
  if (v.base_offset() >= end) {
    log_->truncate_to(end);
  } else {
    storage::BatchOptions opts;
    opts.base_offset = v.base_offset();
    opts.partition_leader_epoch = v.partition_leader_epoch();
    opts.control = v.is_control();
    storage::BatchBuilder keep(opts);
    storage::RecordReader reader(v);
    storage::Record r;
    while (reader.next(r) && r.offset < end) keep.add(r.timestamp, std::nullopt, r.value);
    const Bytes kept = keep.build();
    write_file_durably(dir_ / kPendingFile,
                       std::string_view(reinterpret_cast<const char*>(kept.data()), kept.size()));
    finish_pending_truncation();
  }
  std::erase_if(epochs_, [&](const EpochStart& e) { return e.start_offset >= end; });
  if (durable_end_ > end) note_durable_end(end);
}

void DiskRaftLog::finish_pending_truncation() {
  auto text = read_whole_file(dir_ / kPendingFile);
  if (!text) return;
  Bytes batch(reinterpret_cast<const std::byte*>(text->data()),
              reinterpret_cast<const std::byte*>(text->data()) + text->size());
  storage::BatchLimits limits;
  limits.max_batch_bytes = batch.size();
  if (!storage::validate_batch(batch, limits).ok())
    throw std::runtime_error(dir_.string() + ": corrupt " + kPendingFile);
  storage::RecordBatchView v(batch);
  const Offset base = v.base_offset();
  const Epoch epoch = v.partition_leader_epoch();
  const Offset next = v.next_offset();
  // Idempotent: cut at the batch start and write the kept prefix again, whatever part of
  // this a crash interrupted.
  if (end_offset() >= base) {
    log_->truncate_to(base);
    auto res = log_->append(batch, epoch, wall_clock_ms(), storage::AppendOrigin::internal);
    if (res.error != storage::ErrorCode::none || res.base_offset != base)
      throw std::runtime_error(dir_.string() + ": cannot rewrite a cut batch: " + res.message);
    if (log_->flush() != storage::ErrorCode::none)
      throw std::runtime_error(dir_.string() + ": flush failed");
    // Cutting below the log start pulled the storage log start back with it.
    if (log_->log_start_offset() < start_ && start_ <= next)
      log_->delete_records_before(start_, wall_clock_ms());
  }
  fs::remove(dir_ / kPendingFile);
  fsync_dir(dir_);
  note_durable_end(flushed_end_offset());
}

void DiskRaftLog::truncate_prefix(OffsetAndEpoch id) {
  if (id.offset <= start_) return;
  if (id.offset > end_offset()) {
    reset(id);
    return;
  }
  // The start file first: if a crash comes before the segments go, open() finishes the job.
  write_start_file(id, false);
  start_ = id.offset;
  base_epoch_ = id.epoch;
  log_->delete_records_before(start_, wall_clock_ms());
  // Keep the epoch in force at the new start; drop the ones that ended before it.
  while (epochs_.size() > 1 && epochs_[1].start_offset <= start_) epochs_.erase(epochs_.begin());
  if (!epochs_.empty()) {
    if (start_ >= end_offset()) {
      epochs_.clear();
    } else {
      epochs_.front().start_offset = std::max(epochs_.front().start_offset, start_);
    }
  }
}

void DiskRaftLog::reset(OffsetAndEpoch id) {
  write_start_file(id, true);
  wipe_to(id.offset);
  open_storage();
  if (log_->log_start_offset() != id.offset || log_->log_end_offset() != id.offset)
    throw std::runtime_error(dir_.string() + ": storage log did not restart at " +
                             std::to_string(id.offset));
  write_start_file(id, false);
  start_ = id.offset;
  base_epoch_ = id.epoch;
  epochs_.clear();
  note_durable_end(id.offset);
}

void DiskRaftLog::flush(Offset up_to) {
  if (std::min(up_to, end_offset()) <= flushed_end_offset()) {
    // Synced already (a segment roll, an earlier flush): true only when syncs are real.
    if (!options_.skip_fsync) note_durable_end(flushed_end_offset());
    return;
  }
  if (options_.skip_fsync) {
    log_->mark_flushed(end_offset());
    return;
  }
  if (log_->flush() != storage::ErrorCode::none)
    throw std::runtime_error(dir_.string() + ": raft log flush failed");
  note_durable_end(flushed_end_offset());
}

void DiskRaftLog::close() {
  if (!log_) return;
  const Offset end = end_offset();
  log_->close();
  // The storage log's close syncs only past its recovery point, which the bug moves without
  // a sync: then nothing more is known to be on the disk.
  if (!options_.skip_fsync) note_durable_end(end);
}

}  // namespace brokerd::raft
