#include "brokerd/partitions/partition_manager.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <exception>
#include <set>
#include <thread>
#include <unordered_set>

#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/net/reactor_pool.h"
#include "brokerd/net/run_on.h"
#include "brokerd/partitions/fan_out.h"
#include "brokerd/partitions/partition_dirs.h"
#include "brokerd/partitions/topic_log_config.h"
#include "brokerd/storage/file_budget.h"
#include "partitions/shard.h"

namespace brokerd::partitions {
namespace fs = std::filesystem;

PartitionManager::PartitionManager(net::ReactorPool& reactors, net::BlockingPool& blocking, Options options)
    : reactors_(reactors),
      blocking_(blocking),
      options_(std::move(options)),
      leader_quota_(options_.leader_throttle_rate),
      follower_quota_(options_.follower_throttle_rate),
      defaults_(std::make_shared<const metadata::ConfigMap>(options_.topic_defaults)) {
  for (size_t i = 0; i < reactors_.size(); ++i) shards_.push_back(std::make_unique<Shard>());
  moves_.resize(shards_.size());
  moving_.resize(shards_.size());
  storage::set_open_files_shares(shards_.size());
}

PartitionManager::~PartitionManager() = default;

size_t PartitionManager::shard_of(const TopicPartition& tp) const {
  return std::hash<TopicPartition>{}(tp) % shards_.size();
}

boost::asio::any_io_executor PartitionManager::executor_of(const TopicPartition& tp) const {
  return reactors_.executor(shard_of(tp));
}

Partition* PartitionManager::local(const TopicPartition& tp) {
  auto& parts = shards_[shard_of(tp)]->partitions;
  auto it = parts.find(tp);
  return it == parts.end() ? nullptr : it->second.get();
}

fs::path PartitionManager::choose_log_dir() {
  return options_.log_dirs[next_dir_++ % options_.log_dirs.size()];
}

std::unique_ptr<Partition> PartitionManager::open_partition(const TopicPartition& tp, const metadata::TopicMetadata& topic,
                                                            const fs::path& dir, bool clean, bool metadata_checked,
                                                            int64_t high_watermark) {
  auto effective = metadata::effective_topic_config(*current_defaults(), topic.configs);
  auto log = storage::Log::open(dir, make_log_config(effective), clean);
  if (!metadata_checked && !read_partition_metadata(dir)) write_partition_metadata(dir, topic.id);
  replication::ReplicaConfig rc;
  rc.broker_id = options_.node_id;
  rc.replica_lag_time_max_ms = options_.replica_lag_time_max_ms;
  rc.bugs = options_.replication_bugs;
  rc.min_insync_replicas = static_cast<int32_t>(std::stoll(effective.at("min.insync.replicas")));
  auto p = std::make_unique<Partition>(tp, topic.id, std::move(log), rc, high_watermark);
  p->last_flush_ms = wall_clock_ms();
  p->flush_ms = std::stoll(effective.at("flush.ms"));
  p->flush_messages = std::stoll(effective.at("flush.messages"));
  p->applied_configs = topic.configs;
  p->lso_ignores_open_transactions = options_.storage_bugs.lso_ignores_open_txn;
  return p;
}

bool PartitionManager::release_idle_files(Shard& shard) {
  std::vector<std::pair<uint64_t, storage::Log*>> holding;
  for (auto& [tp, p] : shard.partitions) {
    if (p->log().files_held() > 0) holding.emplace_back(p->log().last_used(), &p->log());
  }
  if (holding.size() < 2) return false;  // never the log being used now
  const size_t k = std::max<size_t>(1, holding.size() / 32);
  std::nth_element(holding.begin(), holding.begin() + static_cast<std::ptrdiff_t>(k), holding.end());
  for (size_t i = 0; i < k; ++i) holding[i].second->release_files();
  return true;
}

void PartitionManager::release_idle_files_of_every_shard() {
  storage::set_thread_evictor([this] {
    bool any = false;
    for (auto& shard : shards_) any = release_idle_files(*shard) || any;
    return any;
  });
}

void PartitionManager::load(std::shared_ptr<const metadata::MetadataImage> image) {
  take_dynamic_configs(*image);
  auto log = module_logger("partitions");
  struct Found {
    TopicPartition tp;
    const metadata::TopicMetadata* topic;
    fs::path dir;
    bool clean;
    const fs::path* log_dir;
  };
  // Which partition directories this node hosts, by shard.
  std::vector<std::vector<Found>> found(shards_.size());
  std::unordered_set<TopicPartition> seen;
  for (const auto& line : recover_moves(options_.log_dirs)) log->info("{}", line);
  for (const auto& dir : options_.log_dirs) {
    fs::create_directories(dir);
    const bool clean = take_clean_shutdown_marker(dir);
    size_t partitions_here = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (!entry.is_directory()) continue;
      auto name = entry.path().filename().string();
      if (name.starts_with("__cluster_metadata")) continue;
      auto tp = parse_dir_name(name);
      if (!tp) {
        if (name.ends_with("-delete")) fs::remove_all(entry.path());
        continue;
      }
      const metadata::TopicMetadata* topic = image->topic(tp->topic);
      const metadata::PartitionAssignment* assigned = topic ? topic->partition(tp->partition) : nullptr;
      if (!assigned || !assigned->hosted_by(options_.node_id)) {
        log->info("deleting {}: its topic no longer has this partition on this node", entry.path().string());
        fs::remove_all(entry.path());
        continue;
      }
      if (!seen.insert(*tp).second) throw std::runtime_error("partition " + name + " exists in more than one log dir");
      found[shard_of(*tp)].push_back({*tp, topic, entry.path(), clean, &dir});
      ++partitions_here;
    }
    const bool is_new = std::find(options_.new_log_dirs.begin(), options_.new_log_dirs.end(), dir) !=
                        options_.new_log_dirs.end();
    if (!clean && partitions_here > 0)
      log->info("log dir {} was not shut down cleanly: recovering its logs", dir.string());
    else if (is_new)
      log->info("log dir {} is new", dir.string());
    else if (!clean)
      log->info("log dir {} was not shut down cleanly; it holds no partition to recover", dir.string());
  }
  read_hw_checkpoints();
  // Each shard's logs are opened on a thread of their own (the reactors do not run yet, so
  // each thread owns its shard), releasing that shard's idle files when the budget is spent.
  std::vector<std::exception_ptr> errors(shards_.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < shards_.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        auto& shard = *shards_[i];
        storage::set_thread_evictor([this, &shard] { return release_idle_files(shard); }, static_cast<int>(i));
        for (const auto& f : found[i]) {
          auto on_disk_id = read_partition_metadata(f.dir);
          if (on_disk_id && *on_disk_id != f.topic->id) {
            log->info("deleting {}: it belongs to an earlier topic of that name", f.dir.string());
            fs::remove_all(f.dir);
            continue;
          }
          shard.offline[f.tp] = OfflinePartition{f.topic->id, f.dir, f.clean, {}, 0, on_disk_id.has_value()};
          try_open(shard, f.tp, *f.topic);
        }
        storage::set_thread_evictor({});
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  // After a crash, what the crashed process wrote (directory entries among it) may still be
  // only in the page cache, and recovery wrote more: one syncfs() per log dir makes it all
  // durable, instead of a directory fsync per partition in the first flush round.
  for (const auto& dir : options_.log_dirs) {
    const bool any = std::any_of(found.begin(), found.end(), [&](const auto& v) {
      return std::any_of(v.begin(), v.end(), [&](const Found& f) { return !f.clean && f.log_dir == &dir; });
    });
    if (!any) continue;
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    const bool synced = fd >= 0 && ::syncfs(fd) == 0;
    if (fd >= 0) ::close(fd);
    if (!synced) continue;  // the flushes sync each directory instead
    for (size_t i = 0; i < shards_.size(); ++i)
      for (const auto& f : found[i])
        if (!f.clean && f.log_dir == &dir)
          if (auto it = shards_[i]->partitions.find(f.tp); it != shards_[i]->partitions.end())
            it->second->log().mark_dir_synced();
  }
  // Then every topic as new: creates what the disks do not have (a log dir was replaced, say)
  // and sets each partition's leadership.
  release_idle_files_of_every_shard();
  for (auto& shard : shards_) reconcile_now(*shard, image);
  storage::set_thread_evictor({});
}

Partition* PartitionManager::try_open(Shard& shard, const TopicPartition& tp, const metadata::TopicMetadata& topic) {
  auto off = shard.offline.find(tp);
  if (off != shard.offline.end() && off->second.topic_id != topic.id) {
    shard.offline.erase(off);  // the topic was recreated: a fresh partition
    off = shard.offline.end();
  }
  const bool retry = off != shard.offline.end();
  const fs::path dir = retry ? off->second.dir : choose_log_dir() / tp.dir_name();
  const bool clean = retry ? off->second.clean : true;
  const bool metadata_checked = retry && off->second.metadata_checked;
  auto hw = shard.hw_at_start.find(tp);
  try {
    auto opened = open_partition(tp, topic, dir, clean, metadata_checked, hw == shard.hw_at_start.end() ? 0 : hw->second);
    if (hw != shard.hw_at_start.end()) shard.hw_at_start.erase(hw);
    if (retry && !off->second.reason.empty())
      module_logger("partitions")->info("{} is online again: its log opened", tp.dir_name());
    if (retry) shard.offline.erase(off);
    return shard.partitions.emplace(tp, std::move(opened)).first->second.get();
  } catch (const std::exception& e) {
    auto& o = shard.offline[tp];
    if (o.reason != e.what()) {
      module_logger("partitions")->error("{} is offline (KAFKA_STORAGE_ERROR to clients), retrying every {} s: {}",
                                      tp.dir_name(), kOfflineRetryMs / 1000, e.what());
    }
    o = OfflinePartition{topic.id, dir, clean, e.what(), wall_clock_ms() + kOfflineRetryMs, metadata_checked};
    return nullptr;
  }
}

bool PartitionManager::offline(const TopicPartition& tp) const { return shards_[shard_of(tp)]->offline.contains(tp); }

void PartitionManager::retry_offline(Shard& shard, int64_t now_ms) {
  // Mid-reconciliation the shard's image is behind some of its partitions: the loop's next
  // pass retries them instead.
  if (shard.offline.empty() || !shard.image || shard.reconciling) return;
  std::vector<std::string> due;
  for (const auto& [tp, o] : shard.offline)
    if (o.retry_at_ms <= now_ms) due.push_back(tp.topic);
  std::sort(due.begin(), due.end());
  due.erase(std::unique(due.begin(), due.end()), due.end());
  for (const auto& name : due) {
    if (auto topic = shard.image->topic_ptr(name)) reconcile_topic(shard, topic, topic);
  }
}

boost::asio::awaitable<std::vector<PartitionStats>> PartitionManager::partition_stats() {
  std::vector<FanOutTask<std::vector<PartitionStats>>> tasks;
  for (size_t i = 0; i < shards_.size(); ++i) {
    tasks.push_back({reactors_.executor(i), [this, i] {
                       std::vector<PartitionStats> out;
                       for (const auto& [tp, p] : shards_[i]->partitions) {
                         const auto& log = p->log();
                         const auto& st = p->replica().state();
                         out.push_back({tp, log.size_bytes(), log.segment_count(), log.log_start_offset(),
                                        log.log_end_offset(), p->high_watermark(), log.dir().parent_path(),
                                        p->is_leader(), static_cast<int32_t>(st.replicas.size()),
                                        static_cast<int32_t>(st.isr.size()), p->replica().min_insync_replicas(),
                                        {}, 0, 0, p->last_stable_offset()});
                         if (auto m = moves_[i].find(tp); m != moves_[i].end()) {
                           out.back().future_log_dir = m->second.target;
                           out.back().future_size_bytes = m->second.copied_bytes;
                           out.back().future_offset_lag = std::max<int64_t>(0, log.log_end_offset() - m->second.copied_end);
                         }
                       }
                       return out;
                     }});
  }
  auto per_shard = co_await fan_out(std::move(tasks));
  std::vector<PartitionStats> all;
  for (auto& v : per_shard) all.insert(all.end(), std::make_move_iterator(v.begin()), std::make_move_iterator(v.end()));
  co_return all;
}

void PartitionManager::start() {
  for (size_t i = 0; i < shards_.size(); ++i) {
    boost::asio::post(reactors_.executor(i), [this, i] {
      storage::set_thread_evictor([this, i] { return release_idle_files(*shards_[i]); }, static_cast<int>(i));
    });
    boost::asio::co_spawn(reactors_.executor(i), background_loop(i), boost::asio::detached);
  }
  boost::asio::co_spawn(reactors_.executor(0), hw_checkpoint_loop(), boost::asio::detached);
}

void PartitionManager::stop() {
  stopping_ = true;
  purgatory_.stop();
}

void PartitionManager::shutdown() {
  stopping_ = true;
  auto log = module_logger("partitions");
  bool ok = true;
  release_idle_files_of_every_shard();  // the reactors have stopped: this thread owns them all
  const HwByDir hws = high_watermarks(nullptr);
  for (auto& shard : shards_) {
    for (auto& [tp, p] : shard->partitions) {
      try {
        // A log whose last flush failed must be recovered at the next start.
        if (p->log().flush() != protocol::ErrorCode::none) {
          ok = false;
          log->error("flushing {} at shutdown failed", tp.dir_name());
        }
        p->log().close();
        p->log().release_files();
      } catch (const std::exception& e) {
        ok = false;
        log->error("closing {} failed: {}", tp.dir_name(), e.what());
      }
    }
    shard->partitions.clear();
  }
  storage::set_thread_evictor({});
  std::map<fs::path, std::string> none;
  write_hw_checkpoints(hws, none);  // a failure costs visibility for a moment, never data
  if (!ok) return;  // the next start recovers
  for (const auto& dir : options_.log_dirs) mark_clean_shutdown(dir);
}

}  // namespace brokerd::partitions
