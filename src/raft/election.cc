// Timers of the roles that have no leader to follow: unattached, prospective, candidate and
// resigned voters.
#include "brokerd/raft/node.h"

namespace brokerd::raft {

void RaftNode::election_tick(int64_t now) {
  if (!is_voter()) return;
  if (now >= election_deadline_) {
    // A candidate whose election timed out goes back to pre-vote (KIP-996), so a node that
    // keeps losing does not keep raising the epoch. A new round hears every leader named.
    lost_leader_ = kNoReplica;
    become_prospective(now);
    return;
  }
  if ((role_ == Role::prospective || role_ == Role::candidate) && now >= vote_resend_at_) {
    send_vote_requests(now);
  }
}

void RaftNode::send_vote_requests(int64_t now) {
  const bool pre = role_ == Role::prospective;
  for (ReplicaId v : config_.voters) {
    if (v == config_.node_id || granted_.count(v) || rejected_.count(v)) continue;
    send(v, VoteRequest{pre ? epoch_ + 1 : epoch_, config_.node_id, v, log_.last_epoch(),
                        log_.end_offset(), pre});
  }
  vote_resend_at_ = now + config_.request_timeout_ms;
}

bool RaftNode::candidate_log_up_to_date(Epoch last_epoch, Offset end_offset) const {
  if (config_.has_bug(Bug::vote_without_log_check)) return true;
  if (last_epoch != log_.last_epoch()) return last_epoch > log_.last_epoch();
  return end_offset >= log_.end_offset();
}

}  // namespace brokerd::raft
