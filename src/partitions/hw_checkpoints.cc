// The high watermarks of every log dir's replication-offset-checkpoint: read at start,
// written every replica.high.watermark.checkpoint.interval.ms and at shutdown.
#include "brokerd/partitions/partition_manager.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <map>

#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/net/reactor_pool.h"
#include "brokerd/partitions/fan_out.h"
#include "brokerd/storage/offset_checkpoint.h"
#include "partitions/shard.h"

namespace brokerd::partitions {
namespace fs = std::filesystem;

void PartitionManager::read_hw_checkpoints() {
  for (const auto& dir : options_.log_dirs) {
    const fs::path path = dir / storage::kReplicationOffsetCheckpointFile;
    try {
      auto entries = storage::read_offset_checkpoint(path);
      if (!entries) continue;
      for (auto& e : *entries) {
        TopicPartition tp{std::move(e.topic), e.partition};
        auto& at = shards_[shard_of(tp)]->hw_at_start;
        at[tp] = e.offset;
      }
    } catch (const std::exception& e) {
      // Only visibility is at stake: the high watermarks start at the log start and move up
      // again as the in-sync replicas fetch.
      module_logger("partitions")->warn("ignoring {}: {}", path.string(), e.what());
    }
  }
}

PartitionManager::HwByDir PartitionManager::high_watermarks(const Shard* only) const {
  HwByDir out;
  // Every log dir gets a file, keyed as a partition's parent path spells it.
  for (const auto& dir : options_.log_dirs) out[(dir / "x").parent_path()];
  for (const auto& shard : shards_) {
    if (only && shard.get() != only) continue;
    for (const auto& [tp, p] : shard->partitions)
      out[p->log().dir().parent_path()].push_back({tp.topic, tp.partition, p->high_watermark()});
  }
  return out;
}

bool PartitionManager::write_hw_checkpoints(const HwByDir& hws, std::map<fs::path, std::string>& written) {
  bool ok = true;
  for (const auto& [dir, entries] : hws) {
    auto text = storage::format_offset_checkpoint(entries);
    auto& last = written[dir];
    if (last == text) continue;
    if (!storage::write_offset_checkpoint(dir / storage::kReplicationOffsetCheckpointFile, entries)) {
      module_logger("partitions")->error("writing {} failed: {}", (dir / storage::kReplicationOffsetCheckpointFile).string(),
                                      std::strerror(errno));
      ok = false;
      continue;
    }
    last = std::move(text);
  }
  return ok;
}

boost::asio::awaitable<void> PartitionManager::hw_checkpoint_loop() {
  boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
  std::map<fs::path, std::string> written;
  int64_t next_write = wall_clock_ms() + options_.hw_checkpoint_interval_ms;
  while (!stopping_) {
    // Short waits, so that a stop is not held up by a long one (the reactors drain first).
    timer.expires_after(std::chrono::milliseconds(std::min<int64_t>(options_.hw_checkpoint_interval_ms, 100)));
    co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    if (stopping_) break;
    if (wall_clock_ms() < next_write) continue;
    next_write = wall_clock_ms() + options_.hw_checkpoint_interval_ms;
    std::vector<FanOutTask<HwByDir>> tasks;
    for (size_t i = 0; i < shards_.size(); ++i)
      tasks.push_back({reactors_.executor(i), [this, i] { return high_watermarks(shards_[i].get()); }});
    auto per_shard = co_await fan_out(std::move(tasks));
    HwByDir all;
    for (auto& part : per_shard)
      for (auto& [dir, entries] : part) {
        auto& to = all[dir];
        to.insert(to.end(), std::make_move_iterator(entries.begin()), std::make_move_iterator(entries.end()));
      }
    // The file order follows the partitions (stable across writes of an unchanged node).
    for (auto& [dir, entries] : all)
      std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
        return std::tie(a.topic, a.partition) < std::tie(b.topic, b.partition);
      });
    auto write = [&all, &written] { write_hw_checkpoints(all, written); };
    co_await blocking_.run(std::move(write));
  }
}

}  // namespace brokerd::partitions
