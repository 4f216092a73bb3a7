#pragma once
// One replica of one partition as a pure state machine: Kafka's ISR replication rules with
// leader epochs. No sockets, clocks or threads; every time is a millisecond count passed in.
//
// Inputs: apply() (the controller's view changed), tick(), and on the leader check_append(),
// on_appended(), handle_fetch(), handle_epoch_end(), handle_alter_partition(); on a follower
// next_request(), handle_epoch_end_response(), handle_fetch_response(), request_failed().
// Outputs, collected with take_output(): produce completions, an AlterPartition for the
// controller, and whether the epoch cache changed (the caller checkpoints it).
// The caller owns the log's bytes: the core reads offsets and epochs and tells the log where
// to append and truncate through ReplicaLog.
#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "brokerd/replication/epoch_cache.h"
#include "brokerd/replication/messages.h"
#include "brokerd/replication/partition_state.h"
#include "brokerd/replication/types.h"

namespace brokerd::replication {

class ReplicaLog {
 public:
  virtual ~ReplicaLog() = default;
  virtual Offset start_offset() const = 0;
  virtual Offset end_offset() const = 0;
  // A follower appends the leader's batch as it was written (offsets and epoch included).
  // False when the batch was not written (a full disk, an I/O error): the follower stops
  // there, and the next fetch asks for it again.
  virtual bool append_replica(const Batch& batch) = 0;
  // Drops [end, end_offset()).
  virtual void truncate_to(Offset end) = 0;
  // Drops everything; the log continues, empty, at `start` (the leader deleted our end).
  virtual void reset_to(Offset start) = 0;
  // Moves the log start up to `start` (at most the end): the leader deleted records below it
  // (DeleteRecords, retention).
  virtual void advance_start(Offset start) = 0;
};

struct Completion {
  uint64_t id = 0;
  ErrorCode error = ErrorCode::none;
};

struct ReplicaOutput {
  std::vector<Completion> completions;
  std::optional<AlterPartitionRequest> alter_partition;
  bool epoch_cache_changed = false;
};

using FollowerRequest = std::variant<EpochEndRequest, FetchRequest>;

// The answer to an acks=all produce whose batch is in this replica's log but will never be
// confirmed here (leadership or its lease was lost while it waited for the ISR) and that a
// follower may have fetched: the next leader may still commit it, so the answer must say
// "possibly written". NOT_LEADER_OR_FOLLOWER would say "not written": librdkafka then counts
// the batch as unsent, and after an epoch bump sends its records again under new sequence
// numbers, which the next leader cannot tell from new records (duplicates). A batch no
// follower was ever sent is answered NOT_LEADER_OR_FOLLOWER, as Kafka does, and cut from
// the log so that the answer stays true (Replica::unconfirmed_answer).
inline constexpr ErrorCode kAppendedUnconfirmed = ErrorCode::not_enough_replicas_after_append;

class Replica {
 public:
  // A (re)started replica: its log as recovered, the epoch cache as checkpointed (entries past
  // the log's end are dropped here) and the checkpointed high watermark.
  Replica(ReplicaConfig config, ReplicaLog& log, LeaderEpochCache& epochs, Offset high_watermark);

  void apply(const PartitionState& state, int64_t now);
  // The topic's min.insync.replicas changed.
  void set_min_insync_replicas(int32_t n) { config_.min_insync_replicas = n; }
  int32_t min_insync_replicas() const { return effective_min_isr(); }
  void tick(int64_t now);

  // Leader side.
  ErrorCode check_append(int16_t acks) const;
  // The leader appended to its log (any origin): a partition whose ISR is the leader alone
  // commits at once.
  void leader_appended(int64_t now);
  // The leader's log holds [base, last] for request `id` (written now, or an idempotent
  // retry found there). acks=-1 completes once the high watermark passes `last`.
  void on_appended(uint64_t id, Offset last, int16_t acks, int64_t deadline, int64_t now);
  // The leader's log starts over, empty, at `start` past its end: a mirror whose source no
  // longer holds the records in between. Followers then reset to it as they would to any
  // leader's log start.
  void leader_reset_to(Offset start, int64_t now);
  FetchDecision handle_fetch(const FetchRequest& r, int64_t now);
  EpochEndResponse handle_epoch_end(const EpochEndRequest& r) const;
  // The controller's answer to `answered`. Only the answer to the pending proposal ends it:
  // an answer to an earlier one (the metadata overtook it, and a new proposal followed) is
  // stale, and the pending proposal's members still count towards the high watermark. So
  // they do after a refusal whose outcome is open (see leader.cc), until newer metadata.
  void handle_alter_partition(const AlterPartitionRequest& answered, ErrorCode error, const PartitionState& state,
                              int64_t now);
  // No ISR change is pending, and none was refused within the retry period.
  bool may_propose_isr(int64_t now) const;
  // The leader's lease (brokerd's rule, not Kafka's). While this node's metadata is not known
  // to be current (it has not heard from the quorum for the session timeout) and no other ISR
  // member has fetched from it for `lease_ms`, the controller has most likely fenced it and
  // moved its leaderships: pending acks=all fail with NOT_LEADER_OR_FOLLOWER and appends are
  // refused, so clients look for the new leader instead of waiting for a cut to heal. The
  // lease is held again as soon as the metadata is current. A leader alone in its ISR keeps it
  // (no other replica could have replaced it).
  void check_lease(bool metadata_current, int64_t lease_ms, int64_t now);
  bool lease_lost() const { return lease_lost_; }
  // The answer to an acks=all produce of [.., last] that this replica appended as leader and
  // can no longer confirm: kAppendedUnconfirmed if a follower may have been sent it,
  // NOT_LEADER_OR_FOLLOWER if none was (see kAppendedUnconfirmed).
  ErrorCode unconfirmed_answer(Offset last) const;

  // Follower side.
  std::optional<FollowerRequest> next_request(int64_t now);
  void handle_epoch_end_response(const EpochEndResponse& r, int64_t now);
  void handle_fetch_response(const FetchResponse& r, int64_t now);
  void request_failed(int64_t now);

  ReplicaOutput take_output();

  bool is_leader() const { return state_.leader == config_.broker_id && leading_; }
  // A follower's request is out and its answer (or request_failed) not yet in.
  bool awaiting_answer() const { return in_flight_; }
  BrokerId leader() const { return state_.leader; }
  Epoch leader_epoch() const { return state_.leader_epoch; }
  Offset high_watermark() const { return hw_; }
  // The leader's low watermark: the smallest log start among itself and the ISR members
  // (kNoOffset while one of them has not fetched in this epoch); what DeleteRecords waits for.
  Offset low_watermark() const;
  // The followers in the controller's ISR that hold `offset` (their log start at or below it,
  // their log end at or past it), with their log ends: where a consumer may read it (KIP-392).
  std::vector<std::pair<BrokerId, Offset>> followers_holding(Offset offset) const;
  Offset log_end_offset() const { return log_.end_offset(); }
  const PartitionState& state() const { return state_; }
  // The ISR the high watermark follows: the controller's, plus members a pending
  // AlterPartition adds (Kafka's maximal ISR).
  std::vector<BrokerId> maximal_isr() const;
  const LeaderEpochCache& epochs() const { return epochs_; }

 private:
  struct FollowerProgress {
    Offset log_end = kNoOffset;          // unknown until it fetches in this epoch
    Offset log_start = kNoOffset;        // as its last fetch reported it
    int64_t last_caught_up = 0;
    int64_t last_fetch = 0;
    Offset leader_end_at_last_fetch = 0;
    int64_t broker_epoch = kNoBrokerEpoch;  // the epoch its last fetch came with
  };
  struct PendingAck {
    uint64_t id;
    Offset last;
    int64_t deadline;
  };
  struct PendingAlter {
    AlterPartitionRequest request;
    int64_t sent_at;
  };
  enum class Phase { idle, truncating, fetching };

  void become_leader(int64_t now);
  void become_follower(int64_t now);
  int32_t effective_min_isr() const;
  // What the leader knows of follower b's fetches; nullptr before its first in this epoch.
  const FollowerProgress* follower(BrokerId b) const;
  void maybe_advance_high_watermark();
  void complete_acks(int64_t now);
  // Leadership or the lease is lost: every waiting acks=all produce is answered
  // (unconfirmed_answer), and what no follower was ever sent is cut from the log.
  void fail_acks();
  void drop_unexposed();
  void propose_isr(std::vector<BrokerId> isr, int64_t now);
  void truncate(Offset end);

  ReplicaConfig config_;
  ReplicaLog& log_;
  LeaderEpochCache& epochs_;
  PartitionState state_;
  bool known_ = false;  // state_ came from the controller
  bool leading_ = false;
  Offset hw_ = 0;
  Offset leader_epoch_start_ = 0;
  // The log end when this replica, leading, last answered a follower's fetch (or became
  // leader): no follower can hold anything past it that this leader wrote. Kept after
  // leadership ends, for the answers that arrive late (unconfirmed_answer).
  Offset exposed_end_ = 0;
  std::vector<std::pair<BrokerId, FollowerProgress>> followers_;
  std::vector<PendingAck> acks_;
  std::optional<PendingAlter> alter_;
  // When the controller last refused an ISR change in this partition epoch: the next
  // proposal waits alter_partition_retry_ms (the refusal usually means the controller's view
  // has not reached this replica yet; proposing again on every fetch only repeats it).
  int64_t alter_refused_at_ = -1;
  bool lease_lost_ = false;  // see check_lease()
  int64_t last_tick_ = -1;
  Phase phase_ = Phase::idle;
  bool in_flight_ = false;
  ReplicaOutput out_;
};

}  // namespace brokerd::replication
