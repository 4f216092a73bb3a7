// Leader duties: announcing the epoch, the high watermark, check-quorum, DescribeQuorum.
#include <algorithm>

#include "brokerd/raft/node.h"

namespace brokerd::raft {

void RaftNode::leader_tick(int64_t now) {
  if (now >= begin_resend_at_) send_begin_quorum_epoch(now);
  // Check-quorum: a leader that has not heard from a majority for a fetch timeout steps down,
  // so a leader cut off from the others does not keep accepting writes it cannot commit.
  if (now - leader_since_ >= config_.fetch_timeout_ms) {
    size_t alive = 1;
    for (auto& [id, p] : progress_) {
      if (id != config_.node_id && p.last_fetch >= now - config_.fetch_timeout_ms &&
          std::find(config_.voters.begin(), config_.voters.end(), id) != config_.voters.end())
        ++alive;
    }
    if (alive < majority()) become_resigned(now);
  }
}

int64_t RaftNode::confirmed_at(int64_t now) const {
  if (role_ != Role::leader) return confirmed_at_;
  // The majority-th most recent contact among the voters, this leader's own being now.
  std::vector<int64_t> contact;
  for (ReplicaId v : config_.voters) {
    if (v == config_.node_id) {
      contact.push_back(now);
    } else {
      auto it = progress_.find(v);
      int64_t at = it == progress_.end() ? -1 : it->second.last_fetch;
      if (resumed_at_ >= 0 && at >= resumed_at_ && at < resumed_at_ + config_.fetch_timeout_ms) at = stalled_from_;
      contact.push_back(at);
    }
  }
  if (contact.empty()) return now;  // an observer-only configuration has no voters to ask
  std::sort(contact.begin(), contact.end(), std::greater<>());
  return contact[majority() - 1];
}

void RaftNode::send_begin_quorum_epoch(int64_t now) {
  for (ReplicaId v : config_.voters) {
    if (v == config_.node_id || progress_[v].acknowledged) continue;
    send(v, BeginQuorumEpochRequest{v, config_.node_id, epoch_});
  }
  begin_resend_at_ = now + config_.request_timeout_ms;
}

void RaftNode::update_high_watermark() {
  if (role_ != Role::leader) return;
  std::vector<Offset> ends;
  for (ReplicaId v : config_.voters) {
    // The leader counts only what it has flushed itself.
    ends.push_back(v == config_.node_id ? log_.flushed_end_offset() : progress_[v].end_offset);
  }
  std::sort(ends.begin(), ends.end(), std::greater<>());
  size_t index = majority() - 1;
  if (config_.has_bug(Bug::hw_past_majority) && index > 0) index -= 1;
  const Offset candidate = ends[index];
  // Only an offset past the start of this epoch may commit (the leader-change entry is there).
  if (candidate > epoch_start_offset_ || config_.has_bug(Bug::commit_old_epoch)) {
    set_high_watermark(candidate);
  }
}

DescribeQuorumResponse RaftNode::describe_quorum(int64_t now) const {
  DescribeQuorumResponse r;
  r.leader_id = leader_id_;
  r.leader_epoch = epoch_;
  if (role_ != Role::leader) {
    r.error = Errc::not_leader_or_follower;
    return r;
  }
  r.high_watermark = hw_;
  auto state_of = [&](ReplicaId id, const Progress& p) {
    return ReplicaState{id, p.end_offset, p.last_fetch, p.last_caught_up};
  };
  for (ReplicaId v : config_.voters) {
    if (v == config_.node_id) {
      r.current_voters.push_back(ReplicaState{v, log_.end_offset(), now, now});
    } else {
      auto it = progress_.find(v);
      r.current_voters.push_back(it == progress_.end() ? ReplicaState{v} : state_of(v, it->second));
    }
  }
  for (auto& [id, p] : progress_) {
    if (std::find(config_.voters.begin(), config_.voters.end(), id) == config_.voters.end())
      r.observers.push_back(state_of(id, p));
  }
  return r;
}

}  // namespace brokerd::raft
