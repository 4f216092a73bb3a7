// Log durability: flushes, the leader-epoch checkpoint, and the flush targets the shards
// sync off their reactors.
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

}  // namespace brokerd::storage
