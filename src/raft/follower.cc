// Follower and observer duties: keep one fetch outstanding to the leader, notice when the
// leader is gone, and (observers) find the leader by asking the voters.
#include <algorithm>

#include "brokerd/raft/node.h"

namespace brokerd::raft {

void RaftNode::follower_tick(int64_t now) {
  if (role_ == Role::follower && now >= fetch_deadline_) {
    if (is_voter()) {
      lost_leader_ = leader_id_;
      become_prospective(now);
    } else {
      become_unattached(epoch_, now);
    }
    return;
  }
  if (inflight_ != 0 && now < inflight_deadline_) return;
  if (now < next_fetch_at_) return;
  // Report only flushed entries: what the leader counts toward the high watermark must
  // survive our crash.
  if (log_.flushed_end_offset() < log_.end_offset() &&
      !config_.has_bug(Bug::fetch_before_flush))
    return;
  ReplicaId target = leader_id_;
  if (role_ != Role::follower) {
    if (config_.voters.empty()) return;
    target = config_.voters[discover_index_++ % config_.voters.size()];
  }
  send_fetch(target, now);
}

void RaftNode::heard_from_leader(int64_t now) {
  fetch_deadline_ = now + config_.fetch_timeout_ms;
  refused_leader_ = kNoReplica;
}

void RaftNode::request_failed(ReplicaId peer, int64_t correlation_id, bool refused, int64_t now) {
  note_run(now);
  // Only the outstanding fetch to the leader counts: a failure reported late, after a newer
  // request or leadership, says nothing about the leader now.
  if (role_ != Role::follower || peer != leader_id_ || inflight_ == 0 || correlation_id != inflight_) return;
  inflight_ = 0;
  next_fetch_at_ = now + config_.fetch_backoff_ms;
  if (refused) {
    // Every follower learns this at about the same moment. They take turns, in voter order, a
    // request timeout apart, so that two of them do not split the vote; and none of them holds
    // a refused leader alive when another asks for a pre-vote.
    refused_leader_ = peer;
    int64_t turn = 0;
    for (ReplicaId v : config_.voters) {
      if (v == config_.node_id) break;
      if (v != peer) ++turn;
    }
    fetch_deadline_ = std::min(fetch_deadline_, now + turn * config_.request_timeout_ms);
  }
  follower_tick(now);
}

void RaftNode::send_fetch(ReplicaId to, int64_t now) {
  if (snapshot_fetch_) {
    inflight_ = send(to, FetchSnapshotRequest{config_.node_id, epoch_, snapshot_fetch_->id,
                                              static_cast<int64_t>(snapshot_fetch_->data.size()),
                                              config_.snapshot_chunk_bytes});
  } else {
    inflight_ = send(to, FetchRequest{config_.node_id, epoch_, log_.end_offset(),
                                      log_.last_epoch(), config_.max_fetch_entries});
  }
  inflight_deadline_ = now + config_.request_timeout_ms;
  fetch_sent_at_ = now;
}

}  // namespace brokerd::raft
