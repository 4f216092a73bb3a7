// Names and one-line renderings for logs and simulator traces.
#include <sstream>
#include <type_traits>

#include "brokerd/raft/messages.h"

namespace brokerd::raft {

const char* role_name(Role r) {
  switch (r) {
    case Role::unattached: return "unattached";
    case Role::prospective: return "prospective";
    case Role::candidate: return "candidate";
    case Role::leader: return "leader";
    case Role::resigned: return "resigned";
    case Role::follower: return "follower";
  }
  return "?";
}

const char* errc_name(Errc e) {
  switch (e) {
    case Errc::none: return "NONE";
    case Errc::not_leader_or_follower: return "NOT_LEADER_OR_FOLLOWER";
    case Errc::fenced_leader_epoch: return "FENCED_LEADER_EPOCH";
    case Errc::unknown_leader_epoch: return "UNKNOWN_LEADER_EPOCH";
    case Errc::inconsistent_voter_set: return "INCONSISTENT_VOTER_SET";
    case Errc::snapshot_not_found: return "SNAPSHOT_NOT_FOUND";
    case Errc::position_out_of_range: return "POSITION_OUT_OF_RANGE";
    case Errc::inconsistent_cluster_id: return "INCONSISTENT_CLUSTER_ID";
  }
  return "?";
}

std::string describe(const Message& m) {
  std::ostringstream o;
  o << m.from << "->" << m.to << " ";
  std::visit(
      [&](const auto& b) {
        using T = std::decay_t<decltype(b)>;
        if constexpr (std::is_same_v<T, VoteRequest>) {
          o << (b.pre_vote ? "PreVote" : "Vote") << "Req{epoch=" << b.candidate_epoch
            << " last=" << b.last_offset << "@" << b.last_offset_epoch << "}";
        } else if constexpr (std::is_same_v<T, VoteResponse>) {
          o << (b.pre_vote ? "PreVote" : "Vote") << "Resp{" << errc_name(b.error)
            << " epoch=" << b.leader_epoch << " leader=" << b.leader_id
            << " granted=" << b.vote_granted << "}";
        } else if constexpr (std::is_same_v<T, BeginQuorumEpochRequest>) {
          o << "BeginEpochReq{epoch=" << b.leader_epoch << " leader=" << b.leader_id << "}";
        } else if constexpr (std::is_same_v<T, BeginQuorumEpochResponse>) {
          o << "BeginEpochResp{" << errc_name(b.error) << " epoch=" << b.leader_epoch << "}";
        } else if constexpr (std::is_same_v<T, EndQuorumEpochRequest>) {
          o << "EndEpochReq{epoch=" << b.leader_epoch << " leader=" << b.leader_id << "}";
        } else if constexpr (std::is_same_v<T, EndQuorumEpochResponse>) {
          o << "EndEpochResp{" << errc_name(b.error) << " epoch=" << b.leader_epoch << "}";
        } else if constexpr (std::is_same_v<T, FetchRequest>) {
          o << "FetchReq{epoch=" << b.current_leader_epoch << " offset=" << b.fetch_offset
            << " last_epoch=" << b.last_fetched_epoch << "}";
        } else if constexpr (std::is_same_v<T, FetchResponse>) {
          o << "FetchResp{" << errc_name(b.error) << " epoch=" << b.leader_epoch
            << " leader=" << b.leader_id << " hw=" << b.high_watermark
            << " n=" << b.entries.size();
          if (!b.entries.empty()) o << " first=" << b.entries.front().offset;
          if (b.diverging_epoch)
            o << " diverging=" << b.diverging_epoch->offset << "@" << b.diverging_epoch->epoch;
          if (b.snapshot_id) o << " snapshot=" << b.snapshot_id->offset;
          o << "}";
        } else if constexpr (std::is_same_v<T, FetchSnapshotRequest>) {
          o << "FetchSnapReq{" << b.snapshot_id.offset << "@" << b.snapshot_id.epoch
            << " pos=" << b.position << "}";
        } else if constexpr (std::is_same_v<T, FetchSnapshotResponse>) {
          o << "FetchSnapResp{" << errc_name(b.error) << " pos=" << b.position
            << " size=" << b.size << " n=" << b.bytes.size() << "}";
        }
      },
      m.body);
  return o.str();
}

}  // namespace brokerd::raft
