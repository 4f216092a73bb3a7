// Construction, the controller's view, and the plumbing shared by both roles.
#include <algorithm>

#include "brokerd/replication/replica.h"

namespace brokerd::replication {

Replica::Replica(ReplicaConfig config, ReplicaLog& log, LeaderEpochCache& epochs, Offset high_watermark)
    : config_(config), log_(log), epochs_(epochs) {
  if (config_.has_bug(Bug::forget_epoch_cache)) epochs_.clear();
  // Unflushed data may be gone: epochs that start past the recovered end never happened.
  const size_t before = epochs_.entries().size();
  epochs_.truncate_from_end(log_.end_offset());
  out_.epoch_cache_changed = epochs_.entries().size() != before;
  hw_ = std::clamp(high_watermark, log_.start_offset(), log_.end_offset());
  exposed_end_ = log_.end_offset();
}

void Replica::apply(const PartitionState& state, int64_t now) {
  if (known_ && (state.leader_epoch < state_.leader_epoch ||
                 (state.leader_epoch == state_.leader_epoch && state.partition_epoch < state_.partition_epoch)))
    return;  // older than what this replica already knows
  const bool new_epoch = !known_ || state.leader_epoch > state_.leader_epoch;
  if (new_epoch || state.partition_epoch != state_.partition_epoch) alter_refused_at_ = -1;  // news: may propose
  known_ = true;
  state_ = state;
  if (alter_ && alter_->request.partition_epoch != state_.partition_epoch) alter_.reset();
  if (state_.leader == config_.broker_id) {
    if (new_epoch || !leading_) become_leader(now);
    maybe_advance_high_watermark();
    complete_acks(now);
  } else if (new_epoch || leading_) {
    become_follower(now);
  }
}

void Replica::tick(int64_t now) {
  const int64_t since_last = last_tick_ < 0 ? 0 : now - last_tick_;
  last_tick_ = now;
  if (!leading_) return;
  if (since_last > config_.replica_lag_time_max_ms / 2) {
    // This replica itself stood still (a process pause, an overloaded host): its followers
    // could not be seen fetching meanwhile. They get a new lag period rather than all being
    // dropped from the ISR for the leader's own stall.
    for (auto& [b, p] : followers_) p.last_caught_up = std::max(p.last_caught_up, now);
  }
  for (auto it = acks_.begin(); it != acks_.end();) {
    if (it->deadline <= now) {
      out_.completions.push_back({it->id, ErrorCode::request_timed_out});
      it = acks_.erase(it);
    } else {
      ++it;
    }
  }
  if (alter_ && now - alter_->sent_at >= config_.alter_partition_retry_ms) {
    alter_->sent_at = now;
    out_.alter_partition = alter_->request;
  }
  if (!may_propose_isr(now)) return;
  // Kafka's shrink rule: a follower that has not reached the leader's end within the lag time.
  std::vector<BrokerId> keep;
  bool shrink = false;
  for (BrokerId b : state_.isr) {
    if (b == config_.broker_id) {
      keep.push_back(b);
      continue;
    }
    const FollowerProgress* p = follower(b);
    if (p && now - p->last_caught_up > config_.replica_lag_time_max_ms) {
      shrink = true;
    } else {
      keep.push_back(b);
    }
  }
  if (shrink) propose_isr(std::move(keep), now);
}

ReplicaOutput Replica::take_output() {
  ReplicaOutput out = std::move(out_);
  out_ = {};
  return out;
}

std::vector<BrokerId> Replica::maximal_isr() const {
  std::vector<BrokerId> isr = state_.isr;
  if (alter_) {
    for (BrokerId b : alter_->request.new_isr)
      if (std::find(isr.begin(), isr.end(), b) == isr.end()) isr.push_back(b);
  }
  return isr;
}

const Replica::FollowerProgress* Replica::follower(BrokerId b) const {
  auto it = std::find_if(followers_.begin(), followers_.end(), [&](const auto& f) { return f.first == b; });
  return it == followers_.end() ? nullptr : &it->second;
}

int32_t Replica::effective_min_isr() const {
  return std::max<int32_t>(1, std::min<int32_t>(config_.min_insync_replicas,
                                                static_cast<int32_t>(state_.replicas.size())));
}

void Replica::truncate(Offset end) {
  if (end < log_.end_offset()) log_.truncate_to(end);
  // Even with nothing to cut, epochs that start at the end hold nothing (a leadership that
  // wrote nothing) and would misplace where the previous epoch ended.
  const size_t before = epochs_.entries().size();
  epochs_.truncate_from_end(end);
  if (epochs_.entries().size() != before) out_.epoch_cache_changed = true;
  hw_ = std::min(hw_, end);
}

}  // namespace brokerd::replication
