#pragma once
// A partition replica hosted by this node. It lives on its home shard and is only touched
// there, so the data path takes no locks. Replication's decisions (leader or follower, the
// ISR, the high watermark, truncation) are made by a replication::Replica that this class
// feeds and adapts to the log.
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "brokerd/partitions/fetch_waiter.h"
#include "brokerd/metadata/metadata_image.h"
#include "brokerd/partitions/topic_partition.h"
#include "brokerd/protocol/uuid.h"
#include "brokerd/replication/replica.h"
#include "brokerd/storage/log.h"

namespace brokerd::partitions {

// The answer to one acks=all produce, filled in on the partition's home shard and read by
// the request once `done` is set.
struct AckSlot {
  std::atomic<bool> done{false};
  std::atomic<int16_t> error{0};
  std::shared_ptr<FetchWaiter> waiter;  // woken when done
};

class Partition {
 public:
  // `high_watermark`: the one the last checkpoint recorded (clamped to the log).
  Partition(TopicPartition id, protocol::Uuid topic_id, std::unique_ptr<storage::Log> log,
            replication::ReplicaConfig config, int64_t high_watermark = 0);
  ~Partition();

  const TopicPartition& id() const { return id_; }
  const protocol::Uuid& topic_id() const { return topic_id_; }
  storage::Log& log() { return *log_; }
  const storage::Log& log() const { return *log_; }

  // What consumers may read up to: every in-sync replica has it.
  int64_t high_watermark() const { return replica_->high_watermark(); }
  // What read_committed consumers may read up to: the high watermark, held back to the first
  // offset of the oldest ongoing transaction, never below the log start.
  int64_t last_stable_offset() const;

  // The partition's place in the cluster, from the metadata image. Only the leader takes
  // produce and consumer fetch requests; a change of leader wakes every parked fetch, so
  // that it answers (NOT_LEADER_OR_FOLLOWER) instead of waiting out its time.
  void apply_assignment(const metadata::PartitionAssignment& a, int32_t min_insync_replicas, int64_t now_ms);
  // Stops serving: the partition is leaving this node.
  void abandon();
  bool is_leader() const { return replica_->is_leader(); }
  int32_t leader() const { return replica_->leader(); }
  int32_t leader_epoch() const { return replica_->leader_epoch(); }
  replication::Replica& replica() { return *replica_; }

  // Appends on the leader and wakes the fetches waiting on this partition. `txn` says how a
  // client's transactional batches are allowed (storage::TxnAppendMode; by default they are not).
  storage::AppendResult append(std::span<std::byte> batches, int64_t now_ms, storage::AppendOrigin origin,
                               storage::TxnAppendMode txn = storage::TxnAppendMode::not_allowed());

  // --- Transactions ---
  // Writes a COMMIT or ABORT marker on the leader (storage::Log::append_marker) and wakes the
  // fetches waiting on this partition; then await_replication() as for an acks=all produce.
  storage::AppendResult append_marker(const storage::TxnMarker& marker, int64_t now_ms);
  // Whether the producer has an ongoing transaction here at this epoch: its transactional
  // batches need no verification.
  bool has_ongoing_transaction(int64_t producer_id, int16_t producer_epoch) const;
  // Starts verifying that this partition is in the producer's transaction; returns the guard
  // (non-zero) to append with (TxnAppendMode::verified) once the coordinator agrees. A marker
  // for the producer clears it, so a write verified before an abort is refused after it.
  uint64_t start_verification(int64_t producer_id, int16_t producer_epoch, int32_t base_sequence);
  // The aborted transactions a read_committed fetch of [from, upper) answers with.
  std::vector<storage::AbortedTxn> aborted_transactions(int64_t from, int64_t upper) const {
    return log_->aborted_transactions(from, upper);
  }
  // A mirror leader's append of its source's batches at their own offsets (changed in place:
  // this cluster's leader epoch is written into each), and the start of its log over at
  // `offset` when the source no longer holds what lies between (storage::Log::append_mirrored).
  storage::AppendResult append_mirrored(std::span<std::byte> batches, int64_t now_ms);
  void restart_mirror_at(int64_t offset, int64_t now_ms);
  // A produce with acks=all waits for `slot` until the ISR has [.., last_offset].
  void await_replication(uint64_t id, int64_t last_offset, int64_t deadline_ms, std::shared_ptr<AckSlot> slot,
                         int64_t now_ms);

  // After every input to the replica: completes acknowledgements, writes the epoch cache,
  // wakes fetches if the high watermark moved, keeps an AlterPartition for the controller.
  void drain_replica();
  // The ISR change the core asked for since the last call, if any.
  std::optional<replication::AlterPartitionRequest> take_alter_partition() { return std::exchange(alter_out_, {}); }

  // Forgets idempotent producers idle for producer.id.expiration.ms, at most once per
  // producer.id.expiration.check.interval.ms (checked lazily by produce and DescribeProducers).
  void expire_producers(int64_t now_ms, int64_t expiration_ms, int64_t check_interval_ms) {
    log_->producer_state().maybe_expire(now_ms, expiration_ms, check_interval_ms);
  }

  // How far a parked fetch may read: the log end (a follower), the high watermark (a
  // read_uncommitted consumer) or the last stable offset (read_committed).
  enum class ReadBound : uint8_t { high_watermark, log_end, last_stable };
  // Parks a fetch until data beyond `seen_end` arrives (woken at once if it already has):
  // past its read bound. Appends, markers and high-watermark moves wake the watchers.
  void watch(const std::shared_ptr<FetchWaiter>& w, int64_t seen_end, ReadBound bound);
  void watch(const std::shared_ptr<FetchWaiter>& w, int64_t seen_end, bool follower = false) {
    watch(w, seen_end, follower ? ReadBound::log_end : ReadBound::high_watermark);
  }
  int64_t read_bound(ReadBound bound) const;
  // Parks a DeleteRecords until the low watermark moves (or the partition changes leader).
  void watch_low_watermark(const std::shared_ptr<FetchWaiter>& w);

  // Flush bookkeeping (home shard only).
  int64_t last_flush_ms = 0;
  int64_t flush_ms = 1000;  // flush.ms
  int64_t flush_messages = INT64_MAX;  // flush.messages
  // Records written and not yet synced (offsets, so an estimate under compaction gaps).
  bool flush_messages_due() const { return log_->log_end_offset() - log_->recovery_point() >= flush_messages; }
  // The topic overrides the log was last configured with: a reconcile reconfigures only
  // partitions whose topic changed.
  std::map<std::string, std::string> applied_configs;
  bool flush_in_progress = false;
  // flush.messages syncs under way (PartitionManager::flush_if_due).
  int syncs_outstanding = 0;
  // Its topic lists this replica in leader/follower.replication.throttled.replicas.
  bool leader_throttled = false;
  bool follower_throttled = false;
  // The mirror link that copies this partition (read-only to producers), empty otherwise.
  std::string mirror_link;
  // Test builds only (inject.bug lso-ignores-open-txn): the last stable offset is the high
  // watermark, open transactions or not, so the fault campaign can prove it sees what that shows.
  bool lso_ignores_open_transactions = false;
  // `broker` is in the controller's ISR as this replica knows it.
  bool in_isr(int32_t broker) const { return replica_->state().in_isr(broker); }
  // When this replica last failed to write what it fetched (a full disk), in wall-clock ms;
  // the replica fetcher waits replica.fetch.backoff.ms before fetching it again.
  int64_t replica_write_failed_ms() const;

  std::unique_ptr<storage::Log> release_log();
  // The same partition's log opened again elsewhere (a move between log dirs): the
  // replication state stays; returns the old log.
  std::unique_ptr<storage::Log> replace_log(std::unique_ptr<storage::Log> log);

 private:
  class LogAdapter;
  void wake_waiters();
  void write_epoch_checkpoint();

  TopicPartition id_;
  protocol::Uuid topic_id_;
  std::unique_ptr<storage::Log> log_;
  std::unique_ptr<LogAdapter> adapter_;
  replication::LeaderEpochCache epochs_;
  std::unique_ptr<replication::Replica> replica_;
  std::vector<std::weak_ptr<FetchWaiter>> waiters_;
  std::vector<std::weak_ptr<FetchWaiter>> low_watermark_waiters_;  // computed only while any wait
  std::map<uint64_t, std::shared_ptr<AckSlot>> acks_;
  std::optional<replication::AlterPartitionRequest> alter_out_;
  int64_t last_hw_ = 0;
  int64_t last_low_watermark_ = -1;
  bool abandoned_ = false;
};

}  // namespace brokerd::partitions
