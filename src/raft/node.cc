// Construction, restart, input dispatch and the plumbing every handler shares.
#include "brokerd/raft/node.h"

#include <algorithm>
#include <type_traits>

namespace brokerd::raft {

RaftNode::RaftNode(RaftConfig config, RaftLog& log, QuorumStateStore& quorum_state,
                   SnapshotStore& snapshots)
    : config_(std::move(config)),
      log_(log),
      quorum_state_(quorum_state),
      snapshots_(snapshots),
      rng_(config_.random_seed ^ (static_cast<uint64_t>(config_.node_id) << 48)) {
  // Random start so a restarted replica never reuses the ids of its previous life, which
  // would let a late answer to an old request pass as the answer to a new one.
  next_correlation_ = static_cast<int64_t>(rng_.next() >> 2);
}

bool RaftNode::is_voter() const {
  return std::find(config_.voters.begin(), config_.voters.end(), config_.node_id) !=
         config_.voters.end();
}

void RaftNode::start(int64_t now) {
  if (auto s = quorum_state_.read()) {
    epoch_ = s->epoch;
    voted_for_ = config_.has_bug(Bug::forget_vote_on_restart) ? kNoReplica : s->voted_for;
    leader_id_ = s->leader_id;
  }
  if (auto snap = snapshots_.latest()) {
    if (log_.start_offset() < snap->id.offset) log_.truncate_prefix(snap->id);
    hw_ = applied_ = snap->id.offset;
    out_.load_snapshot = std::move(*snap);
  } else {
    hw_ = applied_ = log_.start_offset();
  }
  flush_requested_ = log_.flushed_end_offset();
  if (config_.voters.size() == 1 && config_.voters.front() == config_.node_id) {
    // The only voter is its own majority: it leads a new epoch at once instead of waiting
    // out an election timeout (a single node starts without delay).
    become_candidate(now);
  } else if (leader_id_ == config_.node_id) {
    // A leader that restarts never leads the same epoch again.
    become_resigned(now);
  } else if (leader_id_ != kNoReplica) {
    become_follower(epoch_, leader_id_, now);
  } else {
    role_ = Role::unattached;
    reset_election_timer(now);
  }
  request_flush();
}

void RaftNode::note_run(int64_t now) {
  if (last_run_ >= 0 && now - last_run_ >= config_.fetch_timeout_ms / 2) {
    stalled_from_ = last_run_;
    resumed_at_ = now;
  }
  last_run_ = std::max(last_run_, now);
}

void RaftNode::tick(int64_t now) {
  note_run(now);
  switch (role_) {
    case Role::leader:
      leader_tick(now);
      break;
    case Role::follower:
      follower_tick(now);
      break;
    case Role::unattached:
      if (!is_voter()) {
        follower_tick(now);  // observers look for the leader by fetching from voters
      } else {
        election_tick(now);
      }
      break;
    case Role::prospective:
    case Role::candidate:
    case Role::resigned:
      election_tick(now);
      break;
  }
}

void RaftNode::receive(const Message& m, int64_t now) {
  note_run(now);
  std::visit(
      [&](const auto& body) {
        using T = std::decay_t<decltype(body)>;
        if constexpr (std::is_same_v<T, VoteRequest>) handle_vote_request(m, body, now);
        else if constexpr (std::is_same_v<T, VoteResponse>) handle_vote_response(m, body, now);
        else if constexpr (std::is_same_v<T, BeginQuorumEpochRequest>)
          handle_begin_quorum_epoch_request(m, body, now);
        else if constexpr (std::is_same_v<T, BeginQuorumEpochResponse>)
          handle_begin_quorum_epoch_response(m, body, now);
        else if constexpr (std::is_same_v<T, EndQuorumEpochRequest>)
          handle_end_quorum_epoch_request(m, body, now);
        else if constexpr (std::is_same_v<T, EndQuorumEpochResponse>)
          handle_end_quorum_epoch_response(m, body, now);
        else if constexpr (std::is_same_v<T, FetchRequest>) handle_fetch_request(m, body, now);
        else if constexpr (std::is_same_v<T, FetchResponse>) handle_fetch_response(m, body, now);
        else if constexpr (std::is_same_v<T, FetchSnapshotRequest>)
          handle_fetch_snapshot_request(m, body, now);
        else if constexpr (std::is_same_v<T, FetchSnapshotResponse>)
          handle_fetch_snapshot_response(m, body, now);
      },
      m.body);
}

void RaftNode::on_log_flushed(int64_t now) {
  if (role_ == Role::leader) {
    update_high_watermark();
  } else if (role_ == Role::follower) {
    follower_tick(now);
  }
}

std::optional<OffsetAndEpoch> RaftNode::propose(std::string payload, int64_t now) {
  if (role_ != Role::leader) return std::nullopt;
  Entry e{log_.end_offset(), epoch_, false, std::move(payload)};
  log_.append({e});
  request_flush();
  return OffsetAndEpoch{e.offset, e.epoch};
}

bool RaftNode::resign(int64_t now) {
  if (role_ != Role::leader) return false;
  become_resigned(now);
  return true;
}

bool RaftNode::take_snapshot(Offset end_offset, std::string data) {
  if (end_offset > applied_ || end_offset <= log_.start_offset()) return false;
  auto epoch = log_.epoch_at(end_offset - 1);
  if (!epoch) return false;
  Snapshot s{{end_offset, *epoch}, std::move(data)};
  snapshots_.save(s);
  log_.truncate_prefix(s.id);
  return true;
}

RaftOutput RaftNode::take_output() {
  RaftOutput o = std::move(out_);
  out_ = RaftOutput{};
  return o;
}

int64_t RaftNode::send(ReplicaId to, MessageBody body) {
  const int64_t id = ++next_correlation_;
  out_.messages.push_back(Message{config_.node_id, to, id, std::move(body)});
  return id;
}

void RaftNode::reply(const Message& request, MessageBody body) {
  out_.messages.push_back(
      Message{config_.node_id, request.from, request.correlation_id, std::move(body)});
}

void RaftNode::request_flush() {
  flush_requested_ = std::min(flush_requested_, log_.end_offset());
  if (log_.end_offset() > log_.flushed_end_offset() && log_.end_offset() > flush_requested_) {
    flush_requested_ = log_.end_offset();
    out_.flush_up_to = flush_requested_;
  }
}

void RaftNode::set_high_watermark(Offset hw) {
  if (hw <= hw_) return;  // the high watermark never goes back
  hw_ = hw;
  emit_committed();
}

void RaftNode::emit_committed() {
  const Offset limit = std::min(hw_, log_.end_offset());
  if (applied_ < log_.start_offset()) return;  // waiting for a snapshot
  while (applied_ < limit) {
    auto batch = log_.read(applied_, static_cast<size_t>(limit - applied_));
    if (batch.empty()) break;
    applied_ = batch.back().offset + 1;
    for (auto& e : batch) out_.committed.push_back(std::move(e));
  }
}

}  // namespace brokerd::raft
