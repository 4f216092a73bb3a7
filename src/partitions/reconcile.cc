// The hosted replicas made to match each metadata image: partitions opened, dropped,
// reconfigured, and told whether they lead, shard by shard on their home reactors.
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
#include "brokerd/config/dynamic_configs.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/config/properties.h"
#include "brokerd/net/reactor_pool.h"
#include "brokerd/partitions/fan_out.h"
#include "brokerd/net/run_on.h"
#include "brokerd/partitions/topic_log_config.h"
#include "partitions/shard.h"

namespace brokerd::partitions {
namespace fs = std::filesystem;

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
    module_logger("partitions")->error("reconciling shard {} with the metadata failed: {}", index, e.what());
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

}  // namespace brokerd::partitions
