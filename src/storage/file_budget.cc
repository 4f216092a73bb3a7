#include "brokerd/storage/file_budget.h"

#include <fcntl.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <string>
#include <system_error>

namespace brokerd::storage {
namespace {

std::atomic<int64_t> g_budget{0};
std::atomic<int64_t> g_in_use{0};

void release() { g_in_use.fetch_sub(1, std::memory_order_relaxed); }

thread_local Evictor t_evictor;
thread_local bool t_evicting = false;

bool take_below(int64_t limit) {
  if (g_in_use.fetch_add(1, std::memory_order_relaxed) < limit) return true;
  release();
  return false;
}

// Takes one descriptor from the budget, asking this thread's evictor once when it is spent.
// Descriptors still held by responses being sent or syncs running elsewhere, or by another
// shard's logs, may keep the count up: then the descriptor is taken from a margin above the
// budget, which each shard's trim (over_open_files_budget) gives back within a tick.
bool take_from_budget() {
  const int64_t budget = g_budget.load(std::memory_order_relaxed);
  if (budget <= 0) {
    g_in_use.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  if (take_below(budget)) return true;
  if (t_evictor && !t_evicting) {
    t_evicting = true;
    t_evictor();
    t_evicting = false;
    if (take_below(budget)) return true;
  }
  return take_below(budget + open_files_margin(budget));
}

}  // namespace

void set_open_files_budget(int64_t max) { g_budget.store(std::max<int64_t>(max, 0)); }
int64_t open_files_budget() { return g_budget.load(); }
int64_t open_files_in_use() { return g_in_use.load(std::memory_order_relaxed); }

void set_thread_evictor(Evictor fn) { t_evictor = std::move(fn); }

int64_t open_files_margin(int64_t budget) { return std::max<int64_t>(budget / 8, 8); }

bool over_open_files_budget() {
  const int64_t budget = g_budget.load(std::memory_order_relaxed);
  return budget > 0 && g_in_use.load(std::memory_order_relaxed) > budget;
}

int64_t derived_open_files_budget(int64_t rlimit_nofile) {
  const int64_t reserve = std::max(rlimit_nofile / 4, std::min<int64_t>(1024, rlimit_nofile / 2));
  return std::max<int64_t>(rlimit_nofile - reserve, 1);
}

std::shared_ptr<const FileHandle> open_segment_file(const std::filesystem::path& path, int flags, bool budgeted) {
  constexpr int mode = 0644;
  if (!budgeted) {
    const int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "open " + path.string());
    return std::make_shared<const FileHandle>(fd);
  }
  if (!take_from_budget()) {
    throw std::system_error(EMFILE, std::generic_category(),
                            "open " + path.string() + ": the budget of " + std::to_string(g_budget.load()) +
                                " open partition files (log.open.files.max) and its margin are spent");
  }
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  if (fd < 0) {
    const int err = errno;
    release();
    throw std::system_error(err, std::generic_category(), "open " + path.string());
  }
  return std::shared_ptr<const FileHandle>(new FileHandle(fd), [](const FileHandle* f) {
    delete f;
    release();
  });
}

}  // namespace brokerd::storage
