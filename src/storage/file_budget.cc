#include "brokerd/storage/file_budget.h"

#include <fcntl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <string>
#include <system_error>

namespace brokerd::storage {
namespace {

constexpr size_t kMaxShares = 256;
// How many rounds of eviction one open may ask for: each releases a thirty-second of the
// shard's logs that hold files, so a few rounds free many descriptors, unless responses being
// sent or syncs still hold them.
constexpr int kMaxEvictionRounds = 64;

std::atomic<int64_t> g_budget{0};
std::atomic<size_t> g_shares{1};
std::atomic<int64_t> g_in_use{0};
std::array<std::atomic<int64_t>, kMaxShares> g_share_in_use{};

thread_local Evictor t_evictor;
thread_local int t_share = -1;
thread_local bool t_evicting = false;

void charge(int share) {
  g_in_use.fetch_add(1, std::memory_order_relaxed);
  if (share >= 0) g_share_in_use[static_cast<size_t>(share)].fetch_add(1, std::memory_order_relaxed);
}

void release(int share) {
  g_in_use.fetch_sub(1, std::memory_order_relaxed);
  if (share >= 0) g_share_in_use[static_cast<size_t>(share)].fetch_sub(1, std::memory_order_relaxed);
}

int64_t share_in_use(int share) {
  return share < 0 ? g_in_use.load(std::memory_order_relaxed)
                   : g_share_in_use[static_cast<size_t>(share)].load(std::memory_order_relaxed);
}

int64_t share_limit(int share, int64_t budget) {
  return share < 0 ? budget : open_files_share_limit(static_cast<size_t>(share));
}

// Descriptors held past their shares' parts, node-wide: what the margin has given out.
int64_t margin_in_use(int64_t budget) {
  const size_t shares = g_shares.load(std::memory_order_relaxed);
  int64_t over = 0;
  for (size_t s = 0; s < shares; ++s)
    over += std::max<int64_t>(0, g_share_in_use[s].load(std::memory_order_relaxed) - open_files_share_limit(s));
  // What a thread owning every shard charged to no share counts against the budget as a whole.
  return std::max(over, g_in_use.load(std::memory_order_relaxed) - budget);
}

// Asks this thread's evictor until `share` has room or nothing more can be released.
void evict_until_room(int share, int64_t limit) {
  if (!t_evictor || t_evicting) return;
  t_evicting = true;
  for (int round = 0; round < kMaxEvictionRounds && share_in_use(share) >= limit; ++round)
    if (!t_evictor()) break;
  t_evicting = false;
}

// Charges one descriptor to this thread's share, evicting its idle logs when the share is
// spent; descriptors still held by responses being sent or syncs running elsewhere may keep
// the count up, and then it is taken from the margin, which each shard's trim
// (over_open_files_budget) gives back within a tick.
bool take_from_budget(int share) {
  const int64_t budget = g_budget.load(std::memory_order_relaxed);
  if (budget <= 0) {
    charge(share);
    return true;
  }
  const int64_t limit = share_limit(share, budget);
  if (share_in_use(share) >= limit) evict_until_room(share, limit);
  if (share_in_use(share) >= limit && margin_in_use(budget) >= open_files_margin(budget)) return false;
  charge(share);
  return true;
}

}  // namespace

void set_open_files_budget(int64_t max) { g_budget.store(std::max<int64_t>(max, 0)); }
int64_t open_files_budget() { return g_budget.load(); }

void set_open_files_shares(size_t shares) { g_shares.store(std::clamp<size_t>(shares, 1, kMaxShares)); }

int64_t open_files_in_use() { return g_in_use.load(std::memory_order_relaxed); }
int64_t open_files_in_use(size_t share) {
  return share < kMaxShares ? g_share_in_use[share].load(std::memory_order_relaxed) : 0;
}

int64_t open_files_share_limit(size_t share) {
  const auto shares = static_cast<int64_t>(g_shares.load(std::memory_order_relaxed));
  const int64_t budget = g_budget.load(std::memory_order_relaxed);
  return budget / shares + (static_cast<int64_t>(share) < budget % shares ? 1 : 0);
}

void set_thread_evictor(Evictor fn, int share) {
  t_evictor = std::move(fn);
  t_share = share >= 0 && static_cast<size_t>(share) < kMaxShares ? share : -1;
}

int64_t open_files_margin(int64_t budget) { return std::max<int64_t>(budget / 8, 8); }

bool over_open_files_budget(size_t share) {
  const int64_t budget = g_budget.load(std::memory_order_relaxed);
  if (budget <= 0) return false;
  if (open_files_in_use(share) > open_files_share_limit(share)) return true;
  // Files opened by a thread owning every shard are charged to none: while they take the node
  // past its budget, every shard trims.
  const int64_t total = g_in_use.load(std::memory_order_relaxed);
  int64_t shared = 0;
  for (size_t s = 0; s < g_shares.load(std::memory_order_relaxed); ++s)
    shared += g_share_in_use[s].load(std::memory_order_relaxed);
  return total > budget && total > shared;
}

int64_t derived_open_files_budget(int64_t rlimit_nofile) {
  const int64_t reserve = std::max(rlimit_nofile / 4, std::min<int64_t>(1024, rlimit_nofile / 2));
  return std::max<int64_t>(rlimit_nofile - reserve, 1);
}

int64_t derived_max_connections(int64_t rlimit_nofile, int64_t partition_budget) {
  const int64_t own = std::max<int64_t>(24, rlimit_nofile / 16);
  const int64_t partitions = partition_budget + open_files_margin(partition_budget);
  return std::max<int64_t>(rlimit_nofile - partitions - own, 1);
}

std::shared_ptr<const FileHandle> open_segment_file(const std::filesystem::path& path, int flags, bool budgeted) {
  constexpr int mode = 0644;
  if (!budgeted) {
    const int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "open " + path.string());
    return std::make_shared<const FileHandle>(fd);
  }
  const int share = t_share;
  if (!take_from_budget(share)) {
    throw std::system_error(EMFILE, std::generic_category(),
                            "open " + path.string() + ": the budget of " + std::to_string(g_budget.load()) +
                                " open partition files (log.open.files.max) and its margin are spent");
  }
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  if (fd < 0) {
    const int err = errno;
    release(share);
    throw std::system_error(err, std::generic_category(), "open " + path.string());
  }
  return std::shared_ptr<const FileHandle>(new FileHandle(fd), [share](const FileHandle* f) {
    delete f;
    release(share);
  });
}

}  // namespace brokerd::storage
