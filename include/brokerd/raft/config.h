#pragma once
// Static configuration of one replica of the quorum.
#include <cstdint>
#include <vector>

#include "brokerd/raft/types.h"

namespace brokerd::raft {

// Deliberate defects the simulator can switch on to prove that its checker catches them.
// Never set outside tests.
enum class Bug : uint32_t {
  none = 0,
  vote_without_log_check = 1u << 0,     // grant votes to candidates with shorter logs
  commit_old_epoch = 1u << 1,           // advance the high watermark over older-epoch entries
  forget_vote_on_restart = 1u << 2,     // lose voted-for when restarting
  hw_past_majority = 1u << 3,           // count one replica too few for the high watermark
  fetch_before_flush = 1u << 4,         // report unflushed entries to the leader as replicated
  skip_divergence_check = 1u << 5,      // leader serves fetches without checking the epoch
  follow_lost_leader = 1u << 6,         // a prospective follows the silent leader a pre-vote names
};

struct RaftConfig {
  ReplicaId node_id = kNoReplica;
  // Voter ids, including this node if it is a voter; a node outside this list is an observer.
  // Kept as data (not a count) so that KIP-853 voter changes can later replace it at an offset.
  std::vector<ReplicaId> voters;
  int64_t election_timeout_ms = 1000;  // randomised in [t, 2t)
  int64_t fetch_timeout_ms = 2000;     // no answer from the leader for this long: it is gone
  int64_t request_timeout_ms = 300;    // resend an unanswered request
  int64_t fetch_backoff_ms = 50;       // pause after an empty fetch or an error
  int32_t max_fetch_entries = 32;
  int32_t snapshot_chunk_bytes = 64;
  uint64_t random_seed = 0;
  uint32_t bugs = 0;

  bool has_bug(Bug b) const { return (bugs & static_cast<uint32_t>(b)) != 0; }
};

}  // namespace brokerd::raft
