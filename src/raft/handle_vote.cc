// Vote and pre-vote (KIP-996), on the voter and on the candidate.
#include "brokerd/raft/node.h"

namespace brokerd::raft {

void RaftNode::handle_vote_request(const Message& m, const VoteRequest& r, int64_t now) {
  auto answer = [&](bool granted) {
    reply(m, VoteResponse{Errc::none, known_leader(), epoch_, granted, r.pre_vote});
  };
  if (!is_voter()) {
    reply(m, VoteResponse{Errc::inconsistent_voter_set, known_leader(), epoch_, false, r.pre_vote});
    return;
  }
  if (r.pre_vote) {
    // A probe: no state changes. Refuse while a leader is known to be alive, so a replica
    // that was cut off cannot unseat a healthy leader when it comes back.
    const bool leader_alive =
        role_ == Role::leader || (role_ == Role::follower && now < fetch_deadline_ && refused_leader_ == kNoReplica);
    answer(r.candidate_epoch > epoch_ && !leader_alive &&
           candidate_log_up_to_date(r.last_offset_epoch, r.last_offset));
    return;
  }
  if (r.candidate_epoch < epoch_) {
    answer(false);
    return;
  }
  if (r.candidate_epoch > epoch_) become_unattached(r.candidate_epoch, now);
  const bool can_vote = leader_id_ == kNoReplica &&
                        (voted_for_ == kNoReplica || voted_for_ == r.candidate_id) &&
                        role_ != Role::candidate && role_ != Role::leader;
  const bool grant = can_vote && candidate_log_up_to_date(r.last_offset_epoch, r.last_offset);
  if (grant && voted_for_ != r.candidate_id) {
    voted_for_ = r.candidate_id;
    persist_quorum_state();  // durable before the answer leaves
    reset_election_timer(now);
  }
  answer(grant);
}

void RaftNode::handle_vote_response(const Message& m, const VoteResponse& r, int64_t now) {
  if (r.error == Errc::inconsistent_voter_set) return;
  if (r.leader_epoch > epoch_) {
    observe_epoch(r.leader_epoch, r.leader_id, now);
    return;
  }
  if (r.pre_vote) {
    if (role_ != Role::prospective) return;
    if (r.leader_epoch == epoch_ && r.leader_id != kNoReplica && r.leader_id != config_.node_id &&
        (r.leader_id != lost_leader_ || config_.has_bug(Bug::follow_lost_leader))) {
      // The voter knows a leader for our epoch: follow it instead of running.
      become_follower(epoch_, r.leader_id, now);
      return;
    }
    if (!r.vote_granted && r.leader_id != kNoReplica && r.leader_id == lost_leader_ && lost_leader_ == refused_leader_) {
      // The voter still follows the leader whose address refused us: its own fetch fails
      // within moments. Asked again at the next resend, not after a whole election timeout.
      return;
    }
    (r.vote_granted ? granted_ : rejected_).insert(m.from);
    if (granted_.size() >= majority()) {
      become_candidate(now);
    } else if (config_.voters.size() - rejected_.size() < majority()) {
      become_unattached(epoch_, now);  // lost; retry after a fresh election timeout
    }
    return;
  }
  if (role_ != Role::candidate || r.leader_epoch != epoch_) return;
  (r.vote_granted ? granted_ : rejected_).insert(m.from);
  if (granted_.size() >= majority()) become_leader(now);
}

}  // namespace brokerd::raft
