// The background work of each shard: periodic flushes (log.flush.interval.*) and the
// log cleaner of compacted partitions, bounded by their high watermarks.
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
#include "brokerd/config/broker_config.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/net/reactor_pool.h"
#include "brokerd/net/run_on.h"
#include "brokerd/partitions/visit_slice.h"
#include "brokerd/storage/cleaner.h"
#include "brokerd/storage/file_budget.h"
#include "partitions/shard.h"

namespace brokerd::partitions {
namespace fs = std::filesystem;

namespace {

// Calls fn(tp, partition) for the partitions in buckets [from, to) of `partitions`.
template <typename Map, typename Fn>
void for_each_in_buckets(Map& partitions, size_t from, size_t to, Fn&& fn) {
  to = std::min(to, partitions.bucket_count());
  for (size_t b = from; b < to; ++b)
    for (auto it = partitions.begin(b); it != partitions.end(b); ++it) fn(it->first, it->second);
}

}  // namespace

void PartitionManager::flush_due(Shard& shard, size_t index, int64_t now_ms, size_t from, size_t to) {
  // Syncs pin their segments' descriptors until they are done. With an open files budget,
  // at most half of the shard's share is pinned at once, so that reads and appends can still
  // open segments; the partitions left over are synced at a later visit.
  const int64_t budget = storage::open_files_budget();
  const int64_t max_pinned = budget > 0 ? std::max<int64_t>(1, storage::open_files_share_limit(index) / 2) : INT64_MAX;
  for_each_in_buckets(shard.partitions, from, to, [&](const TopicPartition& tp, std::unique_ptr<Partition>& p) {
    if (p->flush_in_progress) return;
    // flush.messages: a leader's produce syncs what it wrote before answering
    // (flush_if_due); a follower's appends are synced here.
    if (now_ms - p->last_flush_ms < p->flush_ms && (p->is_leader() || !p->flush_messages_due())) return;
    auto target = p->log().flush_target();
    p->last_flush_ms = now_ms;
    // Nothing new to sync, unless the directory is: a roll that added no data (retention,
    // DeleteRecords) still created a segment whose entry must become durable.
    if (target.offset <= p->log().recovery_point() && target.dir_version == 0) return;
    const auto pinned = static_cast<int64_t>(target.files.size());
    if (shard.descriptors_syncing > 0 && shard.descriptors_syncing + pinned > max_pinned) {
      p->last_flush_ms = now_ms - p->flush_ms;  // still due: the next visit tries again
      return;
    }
    shard.descriptors_syncing += pinned;
    p->flush_in_progress = true;
    blocking_.post([this, index, tp = tp, topic_id = p->topic_id(), pinned, target = std::move(target)] {
      const bool synced = storage::sync_flush_target(target);
      if (!synced) module_logger("partitions")->error("fdatasync of {} failed: {}", tp.dir_name(), std::strerror(errno));
      boost::asio::post(reactors_.executor(index), [this, index, tp, topic_id, synced, pinned, offset = target.offset,
                                                    dir_version = target.dir_version] {
        shards_[index]->descriptors_syncing -= pinned;
        auto* part = local(tp);
        // The topic may have been deleted and recreated while the sync ran.
        if (!part || part->topic_id() != topic_id) return;
        if (synced) part->log().mark_flushed(offset, dir_version);
        part->flush_in_progress = false;
      });
    });
  });
}

PartitionManager::Options::Cleaner PartitionManager::cleaner_settings_from(const config::BrokerConfig& cfg) {
  Options::Cleaner c;
  c.enable = cfg.boolean("log.cleaner.enable");
  c.threads = static_cast<int32_t>(cfg.integer("log.cleaner.threads"));
  c.backoff_ms = cfg.integer("log.cleaner.backoff.ms");
  c.dedupe_buffer_bytes = cfg.integer("log.cleaner.dedupe.buffer.size");
  c.io_max_bytes_per_second = cfg.integer("log.cleaner.io.max.bytes.per.second");
  return c;
}

bool PartitionManager::cleaning(size_t shard, const TopicPartition& tp) const {
  const auto& states = shards_[shard]->cleaner;
  auto it = states.find(tp);
  return it != states.end() && it->second.in_progress;
}

void PartitionManager::clean_due(Shard& shard, size_t index, int64_t now_ms) {
  const auto& settings = options_.cleaner;
  if (!settings.enable || now_ms < shard.next_clean_check_ms) return;
  shard.next_clean_check_ms = now_ms + std::min<int64_t>(settings.backoff_ms, 1000);
  std::erase_if(shard.cleaner, [&](const auto& kv) { return !kv.second.in_progress && !shard.partitions.contains(kv.first); });
  for (auto& [tp, p] : shard.partitions) {
    storage::Log& log = p->log();
    if (!log.config().cleanup_policy.compact) continue;
    CleanerState& st = shard.cleaner[tp];
    if (st.in_progress || now_ms < st.next_check_ms) continue;
    if (cleaner_passes_.load() >= settings.threads) return;
    st.next_check_ms = now_ms + settings.backoff_ms;
    if (!st.loaded) {
      st.checkpoint = storage::read_cleaner_checkpoint(log.dir());
      st.loaded = true;
    }
    storage::CleaningInput input;
    try {
      // Committed and decided records only: never at or past an ongoing transaction.
      const int64_t bound =
          options_.storage_bugs.clean_past_high_watermark ? log.log_end_offset() : p->last_stable_offset();
      input = storage::snapshot_for_cleaning(log, st.checkpoint, bound);
    } catch (const std::system_error& e) {
      module_logger("partitions")->warn("cannot clean {} now: {}", tp.dir_name(), e.what());
      continue;
    }
    if (input.segments.empty()) continue;
    st.in_progress = true;
    ++cleaner_passes_;
    storage::CleanerOptions opts;
    opts.dedupe_buffer_bytes = static_cast<size_t>(settings.dedupe_buffer_bytes / std::max(settings.threads, 1));
    opts.io_max_bytes_per_second = static_cast<double>(settings.io_max_bytes_per_second);
    opts.abort = &stopping_;
    // Off the reactor: decide, build the offset map, write the cleaned segments.
    blocking_.post([this, index, tp = tp, input = std::move(input), opts] {
      auto res = std::make_shared<storage::CleaningResult>();
      try {
        int64_t now = wall_clock_ms();
        auto range = storage::assess(input, now);
        if (range.should_clean) *res = storage::clean(input, range, now, opts);
        else res.reset();
      } catch (const std::exception& e) {
        res->error = e.what();
      }
      // Back home: swap the cleaned segments in.
      boost::asio::post(reactors_.executor(index), [this, index, tp, res, dir = input.dir] {
        --cleaner_passes_;
        auto& sh = *shards_[index];
        auto* part = local(tp);
        auto it = sh.cleaner.find(tp);
        if (!part || part->log().dir() != dir || it == sh.cleaner.end()) {
          if (res) storage::discard(*res);
          if (it != sh.cleaner.end()) sh.cleaner.erase(it);
          return;
        }
        CleanerState& state = it->second;
        state.in_progress = false;
        if (!res) return;
        auto logger = module_logger("partitions");
        if (!res->error.empty()) {
          logger->error("cleaning {} failed: {}", tp.dir_name(), res->error);
          return;
        }
        try {
          if (storage::install(part->log(), *res, wall_clock_ms())) {
            state.checkpoint = res->next_checkpoint;
            storage::write_cleaner_checkpoint(dir, state.checkpoint);
            const auto& s = res->stats;
            logger->info("cleaned {}: {} segment group(s) rewritten, {} left as they were, {} -> {} bytes, {} of {} "
                         "records kept, {} tombstones removed, {:.3f}s",
                         tp.dir_name(), res->groups.size(), s.segments_unchanged, s.bytes_read, s.bytes_written,
                         s.records_kept, s.records_read, s.tombstones_removed, s.seconds);
          } else {
            state.next_check_ms = 0;  // the log moved on meanwhile: look again soon
          }
        } catch (const std::exception& e) {
          logger->error("installing cleaned segments of {} failed: {}", tp.dir_name(), e.what());
        }
      });
    });
  }
}

boost::asio::awaitable<void> PartitionManager::background_loop(size_t index) {
  Shard& shard = *shards_[index];
  boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
  int64_t next_retention = wall_clock_ms() + options_.retention_check_interval_ms;
  size_t cursor = 0;            // the first bucket of the next slice
  size_t retention_ticks = 0;   // slices left in the pass that enforces retention
  while (!stopping_) {
    timer.expires_after(std::chrono::milliseconds(100));
    [[maybe_unused]] auto [ec] = co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    if (stopping_) break;
    int64_t now = wall_clock_ms();
    // This tick's slice of the buckets (a rehash between ticks may skip or repeat a few
    // partitions for one pass). A partition is visited well within its lag and lease
    // periods: the replication core takes a longer gap between its ticks for a stall of its own.
    const size_t max_ticks = std::clamp<size_t>(
        static_cast<size_t>(std::min(options_.replica_lag_time_max_ms, options_.session_timeout_ms) / 400), 1,
        kMaxTicksPerPass);
    const auto [from, to, ticks_per_pass] =
        next_visit_slice(shard.partitions.bucket_count(), shard.partitions.size(), kVisitsPerTick, max_ticks, cursor);
    flush_due(shard, index, now, from, to);
    clean_due(shard, index, now);
    retry_offline(shard, now);
    if (storage::over_open_files_budget(index)) release_idle_files(shard);
    if (now >= next_retention) {
      next_retention = now + options_.retention_check_interval_ms;
      retention_ticks = ticks_per_pass;
    }
    const bool retention_due = retention_ticks > 0;
    if (retention_ticks > 0) --retention_ticks;
    const bool metadata_current = !options_.metadata_current || options_.metadata_current();
    for_each_in_buckets(shard.partitions, from, to, [&](const TopicPartition& tp, std::unique_ptr<Partition>& p) {
      const bool had_lease = !p->replica().lease_lost();
      p->replica().check_lease(metadata_current, options_.session_timeout_ms, now);
      if (had_lease && p->replica().lease_lost())
        module_logger("replication")->warn("{}: no word from the quorum and no follower for {} ms: no longer "
                                           "acting as leader until the metadata is current", tp.dir_name(),
                                           options_.session_timeout_ms);
      p->replica().tick(now);
      after_replica_input(tp, *p);
      try {
        if (retention_due) {
          const bool bug = options_.storage_bugs.retention_past_high_watermark;
          p->log().enforce_retention(now, bug ? p->log().log_end_offset() : p->high_watermark());
        }
        p->log().delete_expired_files(now);
      } catch (const std::exception& e) {
        module_logger("partitions")->error("retention on {} failed: {}", tp.dir_name(), e.what());
      }
    });
  }
}

boost::asio::awaitable<protocol::ErrorCode> PartitionManager::flush_if_due(const TopicPartition& tp) {
  struct Taken {
    storage::FlushTarget target;
    protocol::Uuid topic_id;
    const storage::Log* log = nullptr;  // a move to another log dir replaces it
    bool due = false;
  };
  auto take = [this, tp] {
    Taken t;
    Partition* p = local(tp);
    if (!p || !p->flush_messages_due()) return t;
    t.target = p->log().flush_target();
    t.topic_id = p->topic_id();
    t.log = &p->log();
    t.due = true;
    ++p->syncs_outstanding;  // a move between log dirs waits for it
    return t;
  };
  auto taken = co_await net::run_on(executor_of(tp), std::move(take));
  if (!taken.due) co_return protocol::ErrorCode::none;
  // The sync's errno, read on the thread that ran it (0 when it succeeded).
  auto sync = [target = taken.target] { return storage::sync_flush_target(target) ? 0 : errno; };
  const int sync_errno = co_await blocking_.run(std::move(sync));
  const bool synced = sync_errno == 0;
  auto mark = [this, tp, synced, &taken] {
    Partition* p = local(tp);
    if (!p || p->topic_id() != taken.topic_id) return;
    --p->syncs_outstanding;
    if (&p->log() == taken.log && synced) p->log().mark_flushed(taken.target.offset, taken.target.dir_version);
  };
  co_await net::run_on(executor_of(tp), std::move(mark));
  if (!synced) {
    module_logger("partitions")->error("fdatasync of {} failed (flush.messages): {}", tp.dir_name(), std::strerror(sync_errno));
    co_return protocol::ErrorCode::kafka_storage_error;
  }
  co_return protocol::ErrorCode::none;
}

}  // namespace brokerd::partitions
