// EndQuorumEpoch: the leader resigns and names the voters it would like to succeed it.
#include <algorithm>

#include "brokerd/raft/node.h"

namespace brokerd::raft {

void RaftNode::handle_end_quorum_epoch_request(const Message& m, const EndQuorumEpochRequest& r,
                                               int64_t now) {
  if (r.leader_epoch < epoch_) {
    reply(m, EndQuorumEpochResponse{Errc::fenced_leader_epoch, known_leader(), epoch_});
    return;
  }
  const bool from_our_leader = r.leader_epoch == epoch_ && leader_id_ == r.leader_id &&
                               role_ == Role::follower;
  if (r.leader_epoch > epoch_ || from_our_leader) {
    become_unattached(r.leader_epoch, now);
    // The most up-to-date successor runs first; the others wait a little longer each, so
    // the election usually succeeds at the first try.
    auto pos = std::find(r.preferred_candidates.begin(), r.preferred_candidates.end(),
                         config_.node_id);
    if (pos != r.preferred_candidates.end()) {
      const int64_t rank = pos - r.preferred_candidates.begin();
      election_deadline_ = now + rank * config_.election_timeout_ms / 2 +
                           rng_.range(0, config_.fetch_backoff_ms);
    }
  }
  reply(m, EndQuorumEpochResponse{Errc::none, known_leader(), epoch_});
}

void RaftNode::handle_end_quorum_epoch_response(const Message& m,
                                                const EndQuorumEpochResponse& r, int64_t now) {
  observe_epoch(r.leader_epoch, r.leader_id, now);
}

}  // namespace brokerd::raft
