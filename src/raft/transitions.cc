// Role changes. Every change of epoch, vote or known leader is written to the quorum-state
// store before any message that depends on it leaves the node.
#include <algorithm>
#include <utility>

#include "brokerd/raft/node.h"

namespace brokerd::raft {

void RaftNode::persist_quorum_state() {
  quorum_state_.write(QuorumStateData{epoch_, voted_for_, leader_id_});
}

void RaftNode::reset_election_timer(int64_t now) {
  election_deadline_ =
      now + config_.election_timeout_ms + rng_.range(0, config_.election_timeout_ms - 1);
}

void RaftNode::become_unattached(Epoch epoch, int64_t now) {
  lost_leader_ = kNoReplica;
  if (epoch != epoch_) voted_for_ = kNoReplica;
  epoch_ = epoch;
  role_ = Role::unattached;
  leader_id_ = kNoReplica;
  progress_.clear();
  granted_.clear();
  rejected_.clear();
  inflight_ = 0;
  snapshot_fetch_.reset();
  persist_quorum_state();
  reset_election_timer(now);
}

void RaftNode::become_follower(Epoch epoch, ReplicaId leader, int64_t now) {
  lost_leader_ = kNoReplica;
  if (epoch != epoch_) voted_for_ = kNoReplica;
  epoch_ = epoch;
  role_ = Role::follower;
  leader_id_ = leader;
  progress_.clear();
  granted_.clear();
  rejected_.clear();
  inflight_ = 0;
  snapshot_fetch_.reset();
  next_fetch_at_ = now;
  heard_from_leader(now);
  persist_quorum_state();
  follower_tick(now);
}

void RaftNode::become_prospective(int64_t now) {
  // KIP-996: ask first whether the voters would vote, without touching any epoch.
  role_ = Role::prospective;
  leader_id_ = kNoReplica;
  granted_ = {config_.node_id};
  rejected_.clear();
  inflight_ = 0;
  snapshot_fetch_.reset();
  reset_election_timer(now);
  if (granted_.size() >= majority()) {
    become_candidate(now);
    return;
  }
  send_vote_requests(now);
}

void RaftNode::become_candidate(int64_t now) {
  lost_leader_ = kNoReplica;
  epoch_ += 1;
  role_ = Role::candidate;
  voted_for_ = config_.node_id;
  leader_id_ = kNoReplica;
  granted_ = {config_.node_id};
  rejected_.clear();
  persist_quorum_state();
  reset_election_timer(now);
  if (granted_.size() >= majority()) {
    become_leader(now);
    return;
  }
  send_vote_requests(now);
}

void RaftNode::become_leader(int64_t now) {
  refused_predecessor_ = std::exchange(refused_leader_, kNoReplica);
  role_ = Role::leader;
  leader_id_ = config_.node_id;
  persist_quorum_state();
  granted_.clear();
  rejected_.clear();
  progress_.clear();
  for (ReplicaId v : config_.voters) progress_[v] = Progress{};
  leader_since_ = now;
  // Every epoch opens with an entry of its own: entries of older epochs become committed only
  // together with it, never by counting replicas on their own.
  epoch_start_offset_ = log_.end_offset();
  log_.append({Entry{epoch_start_offset_, epoch_, true,
                     "leader-change:" + std::to_string(config_.node_id)}});
  request_flush();
  send_begin_quorum_epoch(now);
  update_high_watermark();
}

void RaftNode::become_resigned(int64_t now) {
  role_ = Role::resigned;
  leader_id_ = config_.node_id;  // still the leader of this epoch, but no longer serving
  std::vector<std::pair<Offset, ReplicaId>> order;
  for (ReplicaId v : config_.voters) {
    if (v == config_.node_id) continue;
    auto it = progress_.find(v);
    order.emplace_back(it == progress_.end() ? -1 : it->second.end_offset, v);
  }
  std::sort(order.begin(), order.end(), std::greater<>());
  EndQuorumEpochRequest req{config_.node_id, epoch_, {}};
  for (auto& [end, v] : order) req.preferred_candidates.push_back(v);
  for (auto& [end, v] : order) send(v, req);
  progress_.clear();
  reset_election_timer(now);
}

bool RaftNode::observe_epoch(Epoch epoch, ReplicaId leader, int64_t now) {
  if (epoch > epoch_) {
    if (leader != kNoReplica && leader != config_.node_id) {
      become_follower(epoch, leader, now);
    } else {
      become_unattached(epoch, now);
    }
    return true;
  }
  if (epoch == epoch_ && leader != kNoReplica && leader != config_.node_id &&
      (role_ == Role::unattached || role_ == Role::prospective || role_ == Role::candidate) &&
      leader_id_ == kNoReplica) {
    become_follower(epoch, leader, now);
    return true;
  }
  return false;
}

}  // namespace brokerd::raft
