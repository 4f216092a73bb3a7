// PartitionManager: moving a hosted partition to another log dir of this node while it
// keeps serving (AlterReplicaLogDirs). The file work is partitions/log_dir_move.h; this part
// runs the rounds on the blocking pool and the swap on the partition's home shard.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>

#include "brokerd/partitions/partition_manager.h"
#include "brokerd/common/logger.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/net/reactor_pool.h"
#include "brokerd/storage/log.h"

namespace brokerd::partitions {
namespace fs = std::filesystem;
using protocol::ErrorCode;

namespace {

// A round that copies less than this is followed by the last one, which runs with the log
// closed on the home shard: the pause it causes is bounded by what arrives during a round.
constexpr uint64_t kLastRoundBytes = 1 << 20;
// Rounds before the last one regardless (a partition written faster than it can be copied).
constexpr int kMaxRounds = 50;
// How long the last round waits for a sync or a cleaner pass of the partition to end.
constexpr int kQuietWaitMs = 10'000;

bool same_dir(const fs::path& a, const fs::path& b) {
  return fs::absolute(a).lexically_normal() == fs::absolute(b).lexically_normal();
}

uint64_t total_size(const CopiedFiles& copied) {
  uint64_t sum = 0;
  for (const auto& [_, f] : copied) sum += f.size;
  return sum;
}

// The files the last round copies whole even when their inode and size are those copied:
// the active segment's indexes (written in place through a mapping) and the partition's own
// small files (checkpoints, metadata). Everything else named by an offset (records, earlier
// indexes, producer snapshots) changes only by growing or by being replaced.
std::vector<std::string> rewritten_at_close(const std::vector<PartitionFile>& files) {
  std::string last_base;
  for (const auto& f : files)
    if (f.name.ends_with(".log")) last_base = std::max(last_base, f.name.substr(0, f.name.size() - 4));
  std::vector<std::string> out;
  for (const auto& f : files) {
    const bool by_offset = !f.name.empty() && f.name[0] >= '0' && f.name[0] <= '9';
    const bool active_index = f.name == last_base + ".index" || f.name == last_base + ".timeindex";
    if (!by_offset || active_index) out.push_back(f.name);
  }
  return out;
}

}  // namespace

ErrorCode PartitionManager::move_to_log_dir(const TopicPartition& tp, const fs::path& target) {
  const size_t index = shard_of(tp);
  Partition* p = local(tp);
  if (!p) return offline(tp) ? ErrorCode::kafka_storage_error : ErrorCode::replica_not_available;
  auto& moves = moves_[index];
  if (same_dir(p->log().dir().parent_path(), target)) {
    moves.erase(tp);  // the running move sees it is no longer wanted
    return ErrorCode::none;
  }
  if (auto it = moves.find(tp); it != moves.end() && same_dir(it->second.target, target)) return ErrorCode::none;
  const uint64_t generation = next_move_.fetch_add(1);
  moves[tp] = LogDirMove{target, generation, 0, 0};
  module_logger("partitions")->info("moving {} from {} to {}", tp.dir_name(), p->log().dir().parent_path().string(),
                                 target.string());
  boost::asio::co_spawn(reactors_.executor(index), run_move(index, tp, generation), boost::asio::detached);
  return ErrorCode::none;
}

boost::asio::awaitable<void> PartitionManager::run_move(size_t index, TopicPartition tp, uint64_t generation) {
  auto logger = module_logger("partitions");
  auto& moves = moves_[index];
  auto& running = moving_[index];
  boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
  auto sleep_ms = [&](int ms) {
    timer.expires_after(std::chrono::milliseconds(ms));
    return timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  };
  // One move of a partition at a time: a newer request waits until an older move it replaced
  // has deleted its copy.
  for (int waited = 0; running.contains(tp); waited += 10) {
    if (waited >= kQuietWaitMs || stopping_) {
      logger->error("moving {}: an earlier move of it did not end in time", tp.dir_name());
      if (auto m = moves.find(tp); m != moves.end() && m->second.generation == generation) moves.erase(m);
      co_return;
    }
    co_await sleep_ms(10);
  }
  Partition* p = local(tp);
  auto it = moves.find(tp);
  if (!p || it == moves.end() || it->second.generation != generation) co_return;
  running.insert(tp);
  const protocol::Uuid topic_id = p->topic_id();
  const fs::path source = p->log().dir();
  const fs::path target = it->second.target;
  const fs::path future = target / (tp.dir_name() + kFutureSuffix);
  const fs::path final_dir = target / tp.dir_name();
  // Still wanted, and the same partition in the same place (not deleted, recreated or stopped).
  auto current = [&]() -> LogDirMove* {
    p = local(tp);
    auto m = moves.find(tp);
    if (stopping_ || !p || p->topic_id() != topic_id || p->log().dir() != source || m == moves.end() ||
        m->second.generation != generation)
      return nullptr;
    return &m->second;
  };
  // A sync or a cleaner pass of the partition comes back to the log it started from.
  auto busy = [&] { return p->flush_in_progress || p->syncs_outstanding > 0 || cleaning(index, tp); };
  auto copied = std::make_shared<CopiedFiles>();
  std::string failure;
  bool done = false;
  int rounds = 0;
  double pause_ms = 0;
  try {
    if (fs::exists(final_dir)) throw std::runtime_error(final_dir.string() + " exists already");
    uint64_t rewrites = p->log().rewrites();
    while (!done && rounds < kMaxRounds && current()) {
      // Rounds while the partition serves, until one copies little. The active segment's
      // indexes change in place all the time: the last round copies them.
      for (; rounds < kMaxRounds; ++rounds) {
        LogDirMove* m = current();
        if (!m) break;
        // After a truncation a file may have grown back past what was copied: copy it all again.
        if (p->log().rewrites() != rewrites) copied->clear();
        rewrites = p->log().rewrites();
        auto files = list_partition_files(source);
        const auto active = rewritten_at_close(files);
        std::erase_if(files, [&](const PartitionFile& f) {
          return (f.name.ends_with(".index") || f.name.ends_with(".timeindex")) &&
                 std::find(active.begin(), active.end(), f.name) != active.end();
        });
        const int64_t end = p->log().log_end_offset();
        // Named, not a temporary of the co_await expression (see net/run_on.h on GCC 12).
        auto round_fn = [source, future, files = std::move(files), copied] {
          return copy_round(source, future, files, *copied);
        };
        const uint64_t written = co_await blocking_.run(std::move(round_fn));
        if (!(m = current())) break;
        m->copied_bytes = total_size(*copied);
        m->copied_end = end;
        if (written < kLastRoundBytes && p->log().rewrites() == rewrites) break;
      }
      for (int waited = 0; current() && busy(); waited += 10) {
        if (waited >= kQuietWaitMs) throw std::runtime_error("a sync or cleaner pass of the partition did not end in time");
        co_await sleep_ms(10);
      }
      if (!current()) break;
      if (p->log().rewrites() != rewrites) continue;  // truncated while waiting: more rounds
      const auto t0 = std::chrono::steady_clock::now();
      finish_move(*p, future, final_dir, *copied);
      pause_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      done = true;
    }
    if (!done && rounds >= kMaxRounds) throw std::runtime_error("the copy did not catch up with the writes");
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (auto m = moves.find(tp); m != moves.end() && m->second.generation == generation) moves.erase(m);
  if (done) {
    logger->info("moved {} to {}: {} bytes in {} round(s) while serving, then {:.1f} ms with the log closed",
                 tp.dir_name(), target.string(), total_size(*copied), rounds + 1, pause_ms);
  } else if (!failure.empty()) {
    logger->error("moving {} to {} failed, it stays in {}: {}", tp.dir_name(), target.string(),
                  source.parent_path().string(), failure);
  } else {
    logger->info("the move of {} to {} was called off", tp.dir_name(), target.string());
  }
  // What is left to delete: the old directory after a move, the copy otherwise; the next
  // move of the partition starts only after this.
  auto cleanup = [done, moved = fs::path(source.string() + kMovedSuffix), future,
                  marker = fs::path(final_dir.string() + kCompleteSuffix)] {
    std::error_code ignored;
    fs::remove_all(done ? moved : future, ignored);
    fs::remove(marker, ignored);
    return 0;
  };
  co_await blocking_.run(std::move(cleanup));
  running.erase(tp);
}

void PartitionManager::finish_move(Partition& p, const fs::path& future, const fs::path& final_dir,
                                   CopiedFiles& copied) {
  storage::Log& old = p.log();
  const fs::path source = old.dir();
  const storage::LogConfig cfg = old.config();
  // Closing writes the checkpoint, the producer snapshot and the indexes' final state.
  old.close();
  try {
    auto files = list_partition_files(source);
    copy_round(source, future, files, copied, rewritten_at_close(files));
    commit_move(source, future, final_dir);
  } catch (...) {
    // commit_move put the source back (or, if even that failed, the move stands): the log
    // opens where its directory is. Never where nothing is: that would be an empty log.
    if (fs::is_directory(source)) p.replace_log(storage::Log::open(source, cfg, true));
    else if (fs::is_directory(final_dir)) p.replace_log(storage::Log::open(final_dir, cfg, true));
    throw;
  }
  // If this throws the partition keeps its closed log (appends fail with
  // KAFKA_STORAGE_ERROR) until the node restarts and opens it from its new directory.
  p.replace_log(storage::Log::open(final_dir, cfg, true));
}

}  // namespace brokerd::partitions
