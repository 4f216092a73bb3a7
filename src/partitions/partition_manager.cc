#include "brokerd/partitions/partition_manager.h"
#include "brokerd/partitions/topic_log_config.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <fstream>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_set>

#include "brokerd/partitions/fan_out.h"
#include "brokerd/partitions/visit_slice.h"
#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/config/broker_config.h"
#include "brokerd/config/dynamic_configs.h"
#include "brokerd/config/properties.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/net/reactor_pool.h"
#include "brokerd/net/run_on.h"
#include "brokerd/storage/cleaner.h"
#include "brokerd/storage/file_budget.h"

namespace brokerd::partitions {
namespace fs = std::filesystem;
namespace {

constexpr const char* kCleanShutdownMarker = ".brokerd-clean-shutdown";
constexpr const char* kPartitionMetadata = "partition.metadata";

// "<topic>-<n>" -> {topic, n}; nullopt for anything else (temporary or deleted dirs).
std::optional<TopicPartition> parse_dir_name(const std::string& name) {
  auto dash = name.rfind('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 >= name.size()) return std::nullopt;
  int32_t p = 0;
  for (size_t i = dash + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || p > 100000000) return std::nullopt;
    p = p * 10 + (name[i] - '0');
  }
  std::string topic = name.substr(0, dash);
  if (!metadata::valid_topic_name(topic)) return std::nullopt;
  return TopicPartition{topic, p};
}

}  // namespace

bool log_dirs_shut_down_cleanly(const std::vector<fs::path>& log_dirs) {
  for (const auto& dir : log_dirs)
    if (!fs::exists(dir / kCleanShutdownMarker)) return false;
  return true;
}

std::optional<protocol::Uuid> read_partition_metadata(const fs::path& dir) {
  std::ifstream in(dir / kPartitionMetadata);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("topic_id: ")) return protocol::Uuid::from_string(line.substr(10));
  }
  return std::nullopt;
}

void write_partition_metadata(const fs::path& dir, const protocol::Uuid& topic_id) {
  auto tmp = dir / (std::string(kPartitionMetadata) + ".tmp");
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << "version: 0\ntopic_id: " << topic_id.to_string() << "\n";
  }
  fs::rename(tmp, dir / kPartitionMetadata);
}

// The cleaner's bookkeeping of one compacted partition (home shard only).
struct CleanerState {
  storage::CleanerCheckpoint checkpoint;
  bool loaded = false;
  bool in_progress = false;
  int64_t next_check_ms = 0;
};

// A hosted partition whose log could not be opened (EMFILE, EACCES, EIO, ENOSPC): it answers
// KAFKA_STORAGE_ERROR and is opened again after a while.
struct OfflinePartition {
  protocol::Uuid topic_id;
  fs::path dir;
  bool clean = true;
  std::string reason;
  int64_t retry_at_ms = 0;
  bool metadata_checked = false;  // its partition.metadata names this topic
};
constexpr int64_t kOfflineRetryMs = 5000;

struct PartitionManager::Shard {
  std::unordered_map<TopicPartition, std::unique_ptr<Partition>> partitions;
  std::unordered_map<TopicPartition, OfflinePartition> offline;
  std::unordered_map<TopicPartition, CleanerState> cleaner;
  std::shared_ptr<const metadata::MetadataImage> image;  // the last one reconciled
  // The newest image handed over, applied by the reconciliation loop while `reconciling`;
  // callers waiting for an image at an offset (the first) are woken through the timer.
  std::shared_ptr<const metadata::MetadataImage> wanted;
  bool reconciling = false;
  std::vector<std::pair<int64_t, std::shared_ptr<boost::asio::steady_timer>>> waiters;
  std::vector<LeadershipListener> listeners;
  // High watermarks the checkpoints recorded, taken by the partitions as they open.
  std::unordered_map<TopicPartition, int64_t> hw_at_start;
  // Segment descriptors held by this shard's periodic syncs, queued or running: they cannot
  // be released until the sync is done.
  int64_t descriptors_syncing = 0;
  // When the cleaner next looks over the shard's partitions (no partition is due sooner
  // than log.cleaner.backoff.ms; a shard of 60,000 partitions is not walked every tick).
  int64_t next_clean_check_ms = 0;

  void leadership_changed(const TopicPartition& tp, bool leads) const {
    for (const auto& fn : listeners) fn(tp, leads);
  }
  // The topic defaults the shard's partitions were last configured with.
  std::shared_ptr<const metadata::ConfigMap> defaults;
};

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
  auto log = module_logger("cluster");
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
    bool clean = fs::exists(dir / kCleanShutdownMarker);
    fs::remove(dir / kCleanShutdownMarker);
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
      module_logger("cluster")->warn("ignoring {}: {}", path.string(), e.what());
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
      module_logger("cluster")->error("writing {} failed: {}", (dir / storage::kReplicationOffsetCheckpointFile).string(),
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
      module_logger("cluster")->info("{} is online again: its log opened", tp.dir_name());
    if (retry) shard.offline.erase(off);
    return shard.partitions.emplace(tp, std::move(opened)).first->second.get();
  } catch (const std::exception& e) {
    auto& o = shard.offline[tp];
    if (o.reason != e.what()) {
      module_logger("cluster")->error("{} is offline (KAFKA_STORAGE_ERROR to clients), retrying every {} s: {}",
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

void PartitionManager::drop_partition(Shard& shard, const TopicPartition& tp) {
  if (auto off = shard.offline.find(tp); off != shard.offline.end()) {
    std::error_code ignored;
    fs::remove_all(off->second.dir, ignored);
    shard.offline.erase(off);
  }
  auto it = shard.partitions.find(tp);
  if (it == shard.partitions.end()) return;
  const bool was_leader = it->second->is_leader();
  it->second->abandon();  // wakes its parked fetches and fails its waiting produces
  if (was_leader) shard.leadership_changed(tp, false);
  set_followed(tp, -1);
  auto log = it->second->release_log();
  auto dir = log->dir();
  log->close();
  log.reset();
  auto doomed = dir;
  doomed += "." + it->second->topic_id().to_string() + "-delete";
  std::error_code ec;
  fs::rename(dir, doomed, ec);
  blocking_.post([doomed = ec ? dir : doomed] {
    std::error_code ignored;
    fs::remove_all(doomed, ignored);
  });
  shard.partitions.erase(it);
}

void PartitionManager::reconcile_topic(Shard& shard, const metadata::TopicPtr& before, const metadata::TopicPtr& after,
                                       bool defaults_changed) {
  const int32_t self = options_.node_id;
  auto mine = [&](const TopicPartition& tp) { return &*shards_[shard_of(tp)] == &shard; };
  // Partitions that leave this node: the topic is gone or recreated, the partition no longer
  // has a replica here.
  if (before) {
    for (int32_t p = 0; p < before->partition_count(); ++p) {
      TopicPartition tp{before->name, p};
      if (!mine(tp)) continue;
      const metadata::PartitionAssignment* now = after && after->id == before->id ? after->partition(p) : nullptr;
      if (!now || !now->hosted_by(self)) drop_partition(shard, tp);
    }
  }
  if (!after) return;
  // The topic's settings, once for all its partitions.
  const auto effective = metadata::effective_topic_config(*shard.defaults, after->configs);
  const auto min_isr = static_cast<int32_t>(std::stoll(effective.at("min.insync.replicas")));
  auto setting = [&effective](const char* name) {
    auto it = effective.find(name);
    return it == effective.end() ? std::string_view() : std::string_view(it->second);
  };
  const std::string_view leader_throttled = setting("leader.replication.throttled.replicas");
  const std::string_view follower_throttled = setting("follower.replication.throttled.replicas");
  for (int32_t p = 0; p < after->partition_count(); ++p) {
    TopicPartition tp{after->name, p};
    const metadata::PartitionAssignment& a = *after->partition(p);
    if (!mine(tp) || !a.hosted_by(self)) continue;
    auto it = shard.partitions.find(tp);
    if (it != shard.partitions.end() && it->second->topic_id() != after->id) {
      drop_partition(shard, tp);
      it = shard.partitions.end();
    }
    if (it == shard.partitions.end()) {
      auto off = shard.offline.find(tp);
      if (off != shard.offline.end() && off->second.topic_id == after->id && off->second.retry_at_ms > wall_clock_ms())
        continue;  // offline: opened again when its retry is due
      if (!try_open(shard, tp, *after)) continue;
      it = shard.partitions.find(tp);
    } else if (defaults_changed || it->second->applied_configs != after->configs) {
      it->second->log().update_config(make_log_config(effective));
      it->second->flush_ms = std::stoll(effective.at("flush.ms"));
      it->second->flush_messages = std::stoll(effective.at("flush.messages"));
      it->second->applied_configs = after->configs;
    }
    const bool was_leader = it->second->is_leader();
    Partition& part = *it->second;
    part.apply_assignment(a, min_isr, wall_clock_ms());
    part.leader_throttled = throttles(leader_throttled, p, self);
    part.follower_throttled = throttles(follower_throttled, p, self);
    if (!part.mirror_link.empty() && after->mirror_link.empty()) {
      // Promoted: the source's producers never write here again, and this cluster may hand
      // out their ids to its own, which start their sequences afresh.
      part.log().producer_state().clear();
      part.log().producer_state().delete_snapshots_after(-1);
    }
    part.mirror_link = after->mirror_link;
    after_replica_input(tp, part);
    if (was_leader != part.is_leader()) shard.leadership_changed(tp, !was_leader);
    set_followed(tp, part.is_leader() || part.leader() < 0 ? -1 : part.leader());
  }
}

std::vector<PartitionManager::TopicStep> PartitionManager::plan_reconcile(Shard& shard, const metadata::MetadataImage& image) {
  auto defaults = current_defaults();
  // defaults_ is replaced only by a different set, so a new pointer is a change.
  const bool defaults_changed = shard.defaults && shard.defaults != defaults;
  shard.defaults = std::move(defaults);
  std::vector<TopicStep> steps;
  std::set<std::string> changed;
  static const metadata::MetadataImage kEmpty;
  image.for_each_changed_topic(shard.image ? *shard.image : kEmpty, [&](const metadata::TopicPtr& before, const metadata::TopicPtr& after) {
    steps.push_back({before, after, defaults_changed});
    if (defaults_changed && after) changed.insert(after->name);
  });
  if (!defaults_changed) return steps;
  // Every other partition of the shard takes the new defaults, topic by topic.
  std::set<std::string> hosted;
  for (const auto& [tp, p] : shard.partitions)
    if (!changed.contains(tp.topic)) hosted.insert(tp.topic);
  for (const auto& name : hosted)
    if (auto t = image.topic_ptr(name)) steps.push_back({t, t, true});
  return steps;
}

void PartitionManager::reconcile_now(Shard& shard, const std::shared_ptr<const metadata::MetadataImage>& image) {
  if (shard.image && image->offset < shard.image->offset) return;
  for (const auto& s : plan_reconcile(shard, *image)) reconcile_topic(shard, s.before, s.after, s.defaults_changed);
  shard.image = shard.wanted = image;
}

void PartitionManager::hand_over(size_t index, const std::shared_ptr<const metadata::MetadataImage>& image) {
  Shard& shard = *shards_[index];
  const auto& newest = shard.wanted ? shard.wanted : shard.image;
  if (newest && image->offset < newest->offset) return;
  shard.wanted = image;
  if (shard.reconciling) return;
  shard.reconciling = true;
  boost::asio::co_spawn(reactors_.executor(index), reconcile_loop(index), boost::asio::detached);
}

boost::asio::awaitable<void> PartitionManager::reconcile_loop(size_t index) {
  // A slice: the reactor serves its connections between slices.
  constexpr auto kSlice = std::chrono::milliseconds(5);
  Shard& shard = *shards_[index];
  try {
    while (shard.wanted != shard.image) {
      auto target = shard.wanted;
      auto slice_end = std::chrono::steady_clock::now() + kSlice;
      for (const auto& s : plan_reconcile(shard, *target)) {
        reconcile_topic(shard, s.before, s.after, s.defaults_changed);
        if (std::chrono::steady_clock::now() < slice_end) continue;
        co_await boost::asio::post(reactors_.executor(index), boost::asio::use_awaitable);
        slice_end = std::chrono::steady_clock::now() + kSlice;
      }
      shard.image = target;
      std::erase_if(shard.waiters, [&](const auto& w) {
        if (w.first > target->offset) return false;
        w.second->cancel();
        return true;
      });
    }
  } catch (const std::exception& e) {
    module_logger("cluster")->error("reconciling shard {} with the metadata failed: {}", index, e.what());
    shard.wanted = shard.image;
  }
  shard.reconciling = false;
  for (auto& w : shard.waiters) w.second->cancel();
  shard.waiters.clear();
}

boost::asio::awaitable<void> PartitionManager::reconciled(size_t index, int64_t offset) {
  Shard& shard = *shards_[index];
  if (!shard.reconciling || (shard.image && shard.image->offset >= offset)) co_return;
  auto timer = std::make_shared<boost::asio::steady_timer>(reactors_.executor(index),
                                                           boost::asio::steady_timer::time_point::max());
  shard.waiters.emplace_back(offset, timer);
  co_await timer->async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
}

void PartitionManager::take_dynamic_configs(const metadata::MetadataImage& image) {
  std::lock_guard lock(dynamic_mu_);
  if (image.offset < dynamic_offset_ || image.broker_configs == dynamic_configs_) return;
  dynamic_offset_ = image.offset;
  dynamic_configs_ = image.broker_configs;
  const auto& dynamic = *image.broker_configs;
  auto defaults = std::make_shared<metadata::ConfigMap>(options_.topic_defaults);
  for (const auto& def : config::broker_properties()) {
    if (def.topic_name.empty()) continue;
    if (auto v = config::dynamic_value(dynamic, options_.node_id, def.name)) (*defaults)[std::string(def.topic_name)] = v->value;
  }
  if (*defaults != *defaults_) defaults_ = std::move(defaults);
  auto rate = [&](std::string_view name, int64_t fallback) {
    auto v = config::dynamic_value(dynamic, options_.node_id, name);
    return v ? std::stoll(v->value) : fallback;
  };
  leader_quota_.set_rate(rate("leader.replication.throttled.rate", options_.leader_throttle_rate));
  follower_quota_.set_rate(rate("follower.replication.throttled.rate", options_.follower_throttle_rate));
}

std::shared_ptr<const metadata::ConfigMap> PartitionManager::current_defaults() const {
  std::lock_guard lock(dynamic_mu_);
  return defaults_;
}

boost::asio::awaitable<void> PartitionManager::reconcile(std::shared_ptr<const metadata::MetadataImage> image) {
  take_dynamic_configs(*image);
  std::vector<FanOutTask<bool>> tasks;
  for (size_t i = 0; i < shards_.size(); ++i) {
    tasks.push_back({reactors_.executor(i), [this, i, image] {
                       hand_over(i, image);
                       return true;
                     }});
  }
  co_await fan_out(std::move(tasks));
  // Every shard works on it now; waiting for one after the other costs no time.
  for (size_t i = 0; i < shards_.size(); ++i) {
    auto wait = [this, i, offset = image->offset] { return reconciled(i, offset); };
    co_await net::run_on(reactors_.executor(i), std::move(wait));
  }
}

void PartitionManager::set_followed(const TopicPartition& tp, int32_t leader) {
  std::lock_guard lock(followed_mu_);
  auto it = followed_.find(tp);
  const int32_t before = it == followed_.end() ? -1 : it->second;
  if (before == leader) return;
  if (before >= 0) {
    auto& set = followed_by_[before];
    set.erase(tp);
    if (set.empty()) followed_by_.erase(before);
    followed_lists_.erase(before);
  }
  if (leader < 0) {
    if (it != followed_.end()) followed_.erase(it);
    return;
  }
  followed_[tp] = leader;
  followed_by_[leader].insert(tp);
  followed_lists_.erase(leader);
}

std::vector<int32_t> PartitionManager::followed_leaders() const {
  std::lock_guard lock(followed_mu_);
  std::vector<int32_t> out;
  for (const auto& [leader, _] : followed_by_) out.push_back(leader);
  return out;
}

std::shared_ptr<const std::vector<TopicPartition>> PartitionManager::followed_from(int32_t leader) const {
  std::lock_guard lock(followed_mu_);
  auto& list = followed_lists_[leader];
  if (!list) {
    auto it = followed_by_.find(leader);
    list = it == followed_by_.end() ? std::make_shared<const std::vector<TopicPartition>>()
                                    : std::make_shared<const std::vector<TopicPartition>>(it->second.begin(), it->second.end());
  }
  return list;
}

void PartitionManager::on_alter_partition(AlterPartitionSender fn) { alter_sender_ = std::move(fn); }

void PartitionManager::send_alter_partition(const TopicPartition& tp, Partition& p) {
  auto request = p.take_alter_partition();
  if (!request || !alter_sender_) return;
  alter_sender_(tp, p.topic_id(), std::move(*request));
}

void PartitionManager::watch_leadership(LeadershipListener fn) {
  for (size_t i = 0; i < shards_.size(); ++i) {
    boost::asio::post(reactors_.executor(i), [this, i, fn] {
      Shard& shard = *shards_[i];
      shard.listeners.push_back(fn);
      for (const auto& [tp, p] : shard.partitions) fn(tp, p->is_leader());
    });
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
                                        {}, 0, 0});
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
      if (!synced) module_logger("cluster")->error("fdatasync of {} failed: {}", tp.dir_name(), std::strerror(errno));
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
      const int64_t bound = options_.storage_bugs.clean_past_high_watermark ? log.log_end_offset() : p->high_watermark();
      input = storage::snapshot_for_cleaning(log, st.checkpoint, bound);
    } catch (const std::system_error& e) {
      module_logger("cluster")->warn("cannot clean {} now: {}", tp.dir_name(), e.what());
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
        auto logger = module_logger("cluster");
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
        module_logger("cluster")->error("retention on {} failed: {}", tp.dir_name(), e.what());
      }
    });
  }
}

boost::asio::awaitable<protocol::ErrorCode> PartitionManager::await_replicated(const TopicPartition& tp,
                                                                             int64_t last_offset, int64_t timeout_ms) {
  auto waiter = purgatory_.waiter(co_await boost::asio::this_coro::executor);
  auto slot = std::make_shared<AckSlot>();
  slot->waiter = waiter;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  const int64_t deadline_ms = wall_clock_ms() + timeout_ms;
  const auto id = next_ack_id();
  // A named lambda: GCC 12 mishandles an owning-capture temporary inside co_await.
  auto start = [this, tp, last_offset, deadline_ms, slot, id] {
    Partition* p = leading(tp);
    if (!p) {  // appended before leadership moved on
      Partition* was = local(tp);
      return was ? was->replica().unconfirmed_answer(last_offset) : replication::kAppendedUnconfirmed;
    }
    p->await_replication(id, last_offset, deadline_ms, slot, wall_clock_ms());
    after_replica_input(tp, *p);
    return protocol::ErrorCode::none;
  };
  const auto refused = co_await net::run_on(executor_of(tp), std::move(start));
  if (refused != protocol::ErrorCode::none) co_return refused;
  while (true) {
    waiter->reset();
    if (slot->done || std::chrono::steady_clock::now() >= deadline || purgatory_.stopped()) break;
    co_await waiter->wait_until(deadline);
  }
  co_return slot->done ? static_cast<protocol::ErrorCode>(slot->error.load()) : protocol::ErrorCode::request_timed_out;
}

boost::asio::awaitable<std::pair<protocol::ErrorCode, int64_t>> PartitionManager::await_low_watermark(
    const TopicPartition& tp, int64_t offset, int64_t timeout_ms) {
  using Answer = std::pair<protocol::ErrorCode, int64_t>;
  auto waiter = purgatory_.waiter(co_await boost::asio::this_coro::executor);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max<int64_t>(timeout_ms, 0));
  while (true) {
    waiter->reset();
    auto check = [this, tp, offset, waiter]() -> Answer {
      Partition* p = leading(tp);
      if (!p) return {not_served(tp), -1};
      const int64_t low = p->replica().low_watermark();
      if (low >= offset) return {protocol::ErrorCode::none, low};
      p->watch_low_watermark(waiter);
      return {protocol::ErrorCode::request_timed_out, -1};
    };
    const Answer a = co_await net::run_on(executor_of(tp), std::move(check));
    if (a.first != protocol::ErrorCode::request_timed_out) co_return a;
    if (std::chrono::steady_clock::now() >= deadline || purgatory_.stopped()) co_return a;
    co_await waiter->wait_until(deadline);
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
    module_logger("cluster")->error("fdatasync of {} failed (flush.messages): {}", tp.dir_name(), std::strerror(sync_errno));
    co_return protocol::ErrorCode::kafka_storage_error;
  }
  co_return protocol::ErrorCode::none;
}

void PartitionManager::shutdown() {
  stopping_ = true;
  auto log = module_logger("cluster");
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
  for (const auto& dir : options_.log_dirs) std::ofstream(dir / kCleanShutdownMarker) << "clean\n";
}

}  // namespace brokerd::partitions
