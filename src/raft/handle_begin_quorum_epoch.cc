// BeginQuorumEpoch: a newly elected leader tells the voters who it is.
#include "brokerd/raft/node.h"

namespace brokerd::raft {

void RaftNode::handle_begin_quorum_epoch_request(const Message& m,
                                                 const BeginQuorumEpochRequest& r, int64_t now) {
  if (r.leader_epoch < epoch_) {
    reply(m, BeginQuorumEpochResponse{Errc::fenced_leader_epoch, known_leader(), epoch_});
    return;
  }
  if (r.leader_epoch > epoch_) {
    become_follower(r.leader_epoch, r.leader_id, now);
  } else if (role_ != Role::follower || leader_id_ != r.leader_id) {
    if (role_ == Role::leader || role_ == Role::resigned) {
      // Two leaders in one epoch cannot happen; refuse rather than follow.
      reply(m, BeginQuorumEpochResponse{Errc::fenced_leader_epoch, known_leader(), epoch_});
      return;
    }
    become_follower(epoch_, r.leader_id, now);
  }
  reply(m, BeginQuorumEpochResponse{Errc::none, known_leader(), epoch_});
}

void RaftNode::handle_begin_quorum_epoch_response(const Message& m,
                                                  const BeginQuorumEpochResponse& r,
                                                  int64_t now) {
  if (observe_epoch(r.leader_epoch, r.leader_id, now)) return;
  if (role_ != Role::leader || r.leader_epoch != epoch_ || r.error != Errc::none) return;
  auto it = progress_.find(m.from);
  if (it != progress_.end()) it->second.acknowledged = true;
}

}  // namespace brokerd::raft
