#pragma once
// A partition replica hosted by this node. It lives on its home shard and is only touched
// there, so the data path takes no locks.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "brokerd/cluster/fetch_waiter.h"
#include "brokerd/cluster/topic_partition.h"
#include "brokerd/protocol/uuid.h"
#include "brokerd/storage/log.h"

namespace brokerd::cluster {

class Partition {
 public:
  Partition(TopicPartition id, protocol::Uuid topic_id, std::unique_ptr<storage::Log> log)
      : id_(std::move(id)), topic_id_(topic_id), log_(std::move(log)) {}

  const TopicPartition& id() const { return id_; }
  const protocol::Uuid& topic_id() const { return topic_id_; }
  storage::Log& log() { return *log_; }
  const storage::Log& log() const { return *log_; }

  // With one replica every appended batch is committed at once.
  int64_t high_watermark() const { return log_->log_end_offset(); }

  // The partition's place in the cluster, from the metadata image. Only the leader takes
  // produce and fetch requests; a change of leader wakes every parked fetch, so that it
  // answers (NOT_LEADER_OR_FOLLOWER) instead of waiting out its time.
  void set_leadership(int32_t leader, int32_t leader_epoch, bool is_self);
  bool is_leader() const { return is_leader_; }
  int32_t leader() const { return leader_; }
  int32_t leader_epoch() const { return leader_epoch_; }

  // Appends and wakes the fetches waiting on this partition.
  storage::AppendResult append(std::span<std::byte> batches, int64_t now_ms, storage::AppendOrigin origin);

  // Forgets idempotent producers idle for producer.id.expiration.ms, at most once per
  // producer.id.expiration.check.interval.ms (checked lazily by produce and DescribeProducers).
  void expire_producers(int64_t now_ms, int64_t expiration_ms, int64_t check_interval_ms) {
    log_->producer_state().maybe_expire(now_ms, expiration_ms, check_interval_ms);
  }

  // Parks a fetch until data beyond `seen_end` arrives (woken at once if it already has).
  void watch(const std::shared_ptr<FetchWaiter>& w, int64_t seen_end);

  // Flush bookkeeping (home shard only).
  int64_t last_flush_ms = 0;
  int64_t flush_ms = 1000;  // flush.ms
  // The topic overrides the log was last configured with: a reconcile reconfigures only
  // partitions whose topic changed.
  std::map<std::string, std::string> applied_configs;
  bool flush_in_progress = false;

  std::unique_ptr<storage::Log> release_log() { return std::move(log_); }

 private:
  TopicPartition id_;
  protocol::Uuid topic_id_;
  std::unique_ptr<storage::Log> log_;
  std::vector<std::weak_ptr<FetchWaiter>> waiters_;
  int32_t leader_ = -1;
  int32_t leader_epoch_ = 0;
  bool is_leader_ = false;

  void wake_waiters();
};

}  // namespace brokerd::cluster
