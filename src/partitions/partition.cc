#include "brokerd/partitions/partition.h"

#include <algorithm>

#include "brokerd/metadata/partition_election.h"
#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"

namespace brokerd::partitions {

namespace {

// The cache as the file left it, then the epochs of the batches recovery scanned after a
// crash (the file is synced only with flushes, so it may lack the unflushed tail's epochs).
// True when the recovered batches added to it.
bool load_epochs(const storage::Log& log, replication::LeaderEpochCache& cache) {
  if (auto text = log.read_leader_epochs()) {
    if (auto c = replication::LeaderEpochCache::from_checkpoint(*text)) cache = *c;
    else
      module_logger("partitions")->warn("{}: unreadable {}, its epochs are rebuilt from the recovered batches only",
                                     log.dir().string(), storage::Log::kLeaderEpochFile);
  }
  bool added = false;
  for (const auto& e : log.recovered_epochs()) {
    auto latest = cache.latest();
    if (latest && latest->epoch >= e.epoch) continue;
    cache.assign(e.epoch, e.base_offset);
    added = true;
  }
  return added;
}

}  // namespace

// The core sees the log through this: a follower's appends and truncations.
class Partition::LogAdapter final : public replication::ReplicaLog {
 public:
  // Through the partition's pointer: a move to another log dir replaces the log.
  explicit LogAdapter(const std::unique_ptr<storage::Log>& log) : log_(log) {}
  replication::Offset start_offset() const override { return log_->log_start_offset(); }
  replication::Offset end_offset() const override { return log_->log_end_offset(); }
  bool append_replica(const replication::Batch& b) override {
    const int64_t now = wall_clock_ms();
    auto res = log_->append_replica(b.bytes, now);
    if (res.error == protocol::ErrorCode::kafka_storage_error) {
      write_failed_ms = now;  // the log reported it
    } else if (res.error != protocol::ErrorCode::none) {
      module_logger("partitions")->error("{}: replicated batch at {} not written: {}", log_->dir().string(), b.base_offset,
                                      res.message);
    }
    return res.error == protocol::ErrorCode::none;
  }
  void truncate_to(replication::Offset end) override {
    module_logger("replication")->info("{}: truncating from {} to {}", log_->dir().filename().string(),
                                       log_->log_end_offset(), end);
    log_->truncate_to(end);
  }
  void reset_to(replication::Offset start) override { log_->reset_to(start, wall_clock_ms()); }
  void advance_start(replication::Offset start) override {
    if (auto e = log_->delete_records_before(start, wall_clock_ms()); e != protocol::ErrorCode::none)
      module_logger("partitions")->error("{}: cannot move the log start to the leader's {}: {}", log_->dir().string(), start,
                                      protocol::error_name(e));
  }

  int64_t write_failed_ms = 0;

 private:
  const std::unique_ptr<storage::Log>& log_;
};

int64_t Partition::replica_write_failed_ms() const { return adapter_->write_failed_ms; }

Partition::Partition(TopicPartition id, protocol::Uuid topic_id, std::unique_ptr<storage::Log> log,
                     replication::ReplicaConfig cfg, int64_t high_watermark)
    : id_(std::move(id)), topic_id_(topic_id), log_(std::move(log)) {
  adapter_ = std::make_unique<LogAdapter>(log_);
  const bool recovered = load_epochs(*log_, epochs_);
  replica_ = std::make_unique<replication::Replica>(cfg, *adapter_, epochs_, high_watermark);
  last_hw_ = replica_->high_watermark();
  if (recovered) {
    write_epoch_checkpoint();
    if (!log_->persist_leader_epochs())
      module_logger("partitions")->error("{}: cannot sync the leader epochs recovery found", log_->dir().string());
  }
  drain_replica();
}

Partition::~Partition() = default;

void Partition::apply_assignment(const metadata::PartitionAssignment& a, int32_t min_insync_replicas, int64_t now_ms) {
  const int32_t leader_before = leader(), epoch_before = leader_epoch();
  replica_->set_min_insync_replicas(min_insync_replicas);
  replica_->apply(metadata::replication_state(a), now_ms);
  if (leader() != leader_before || leader_epoch() != epoch_before) wake_waiters();
}

void Partition::abandon() {
  abandoned_ = true;
  replication::PartitionState gone = replica_->state();
  gone.leader = replication::kNoBroker;
  ++gone.leader_epoch;
  replica_->apply(gone, 0);
  drain_replica();
  wake_waiters();
}

storage::AppendResult Partition::append(std::span<std::byte> batches, int64_t now_ms, storage::AppendOrigin origin,
                                       storage::TxnAppendMode txn) {
  auto result = log_->append(batches, leader_epoch(), now_ms, origin, txn);
  if (result.error == protocol::ErrorCode::none && !result.duplicate) {
    replica_->leader_appended(now_ms);
    drain_replica();
    wake_waiters();
  }
  return result;
}

storage::AppendResult Partition::append_marker(const storage::TxnMarker& marker, int64_t now_ms) {
  auto result = log_->append_marker(marker, leader_epoch(), now_ms);
  if (result.error == protocol::ErrorCode::none) {
    replica_->leader_appended(now_ms);
    drain_replica();
    wake_waiters();
  }
  return result;
}

int64_t Partition::last_stable_offset() const {
  int64_t lso = high_watermark();
  if (lso_ignores_open_transactions) return std::max(lso, log_->log_start_offset());
  if (auto first = log_->first_unstable_offset()) lso = std::min(lso, *first);
  return std::max(lso, log_->log_start_offset());
}

bool Partition::has_ongoing_transaction(int64_t producer_id, int16_t producer_epoch) const {
  const storage::ProducerEntry* e = log_->producer_state().find(producer_id);
  return e && e->in_transaction() && e->epoch == producer_epoch;
}

uint64_t Partition::start_verification(int64_t producer_id, int16_t producer_epoch, int32_t base_sequence) {
  return log_->producer_state().start_verification(producer_id, producer_epoch, base_sequence);
}

storage::AppendResult Partition::append_mirrored(std::span<std::byte> batches, int64_t now_ms) {
  auto result = log_->append_mirrored(batches, leader_epoch(), now_ms);
  if (result.error == protocol::ErrorCode::none) {
    replica_->leader_appended(now_ms);
    drain_replica();
    wake_waiters();
  }
  return result;
}

void Partition::restart_mirror_at(int64_t offset, int64_t now_ms) {
  replica_->leader_reset_to(offset, now_ms);
  drain_replica();
  wake_waiters();
}

void Partition::await_replication(uint64_t id, int64_t last_offset, int64_t deadline_ms, std::shared_ptr<AckSlot> slot,
                                  int64_t now_ms) {
  acks_[id] = std::move(slot);
  replica_->on_appended(id, last_offset, -1, deadline_ms, now_ms);
  drain_replica();
}

void Partition::drain_replica() {
  auto out = replica_->take_output();
  for (const auto& c : out.completions) {
    auto it = acks_.find(c.id);
    if (it == acks_.end()) continue;
    it->second->error = protocol::code(c.error);
    it->second->done = true;
    if (it->second->waiter) it->second->waiter->wake();
    acks_.erase(it);
  }
  if (out.epoch_cache_changed && !abandoned_) write_epoch_checkpoint();
  if (high_watermark() != last_hw_) {
    last_hw_ = high_watermark();
    wake_waiters();
  }
  if (!low_watermark_waiters_.empty()) {
    const int64_t low = replica_->low_watermark();
    if (low != last_low_watermark_) {
      last_low_watermark_ = low;
      for (auto& w : std::exchange(low_watermark_waiters_, {}))
        if (auto waiter = w.lock()) waiter->wake();
    }
  }
  if (out.alter_partition) alter_out_ = std::move(out.alter_partition);
}

void Partition::write_epoch_checkpoint() { log_->set_leader_epochs(epochs_.to_checkpoint()); }

void Partition::wake_waiters() {
  for (auto& w : waiters_)
    if (auto waiter = w.lock()) waiter->wake();
  waiters_.clear();
  for (auto& w : low_watermark_waiters_)
    if (auto waiter = w.lock()) waiter->wake();
  low_watermark_waiters_.clear();
}

void Partition::watch_low_watermark(const std::shared_ptr<FetchWaiter>& w) {
  last_low_watermark_ = replica_->low_watermark();  // what the waiter saw
  std::erase_if(low_watermark_waiters_, [](const std::weak_ptr<FetchWaiter>& x) { return x.expired(); });
  low_watermark_waiters_.push_back(w);
}

int64_t Partition::read_bound(ReadBound bound) const {
  switch (bound) {
    case ReadBound::log_end:
      return log_->log_end_offset();
    case ReadBound::last_stable:
      return last_stable_offset();
    case ReadBound::high_watermark:
      break;
  }
  return high_watermark();
}

void Partition::watch(const std::shared_ptr<FetchWaiter>& w, int64_t seen_end, ReadBound bound) {
  if (read_bound(bound) > seen_end) {
    w->wake();
    return;
  }
  // Drop waiters that are gone, so an idle partition polled by many fetches stays small.
  std::erase_if(waiters_, [](const std::weak_ptr<FetchWaiter>& x) { return x.expired(); });
  waiters_.push_back(w);
}

std::unique_ptr<storage::Log> Partition::replace_log(std::unique_ptr<storage::Log> log) {
  std::swap(log, log_);
  write_epoch_checkpoint();
  return log;
}

std::unique_ptr<storage::Log> Partition::release_log() {
  replica_.reset();  // it refers to the log through the adapter
  adapter_.reset();
  return std::move(log_);
}

}  // namespace brokerd::partitions
