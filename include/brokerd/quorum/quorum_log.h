#pragma once
// The metadata quorum as the state machine it replicates sees it, with no network behind the
// names: the log it may write to (QuorumLog) and what it must do with what commits
// (QuorumListener). QuorumDriver is the real one; tests of the state machine use one in memory.
#include <functional>
#include <future>
#include <string>
#include <vector>

#include "brokerd/raft/persistence.h"
#include "brokerd/raft/types.h"

namespace brokerd::quorum {

// The state machine fed by the quorum (the metadata image). Called on the driver thread.
class QuorumListener {
 public:
  virtual ~QuorumListener() = default;
  // Replaces everything applied so far.
  virtual void load_snapshot(const raft::Snapshot& snapshot) = 0;
  // Committed entries in offset order (control entries included).
  virtual void apply(const std::vector<raft::Entry>& entries) = 0;
  // A serialiser of everything applied so far (load_snapshot() restores what it returns).
  // Taking it must be cheap; it runs later on a thread of its own, so it must capture an
  // immutable state, not refer to the listener's current one.
  virtual std::function<std::string()> snapshot() = 0;
};

// What the quorum knows right now (thread-safe copy, refreshed after every step).
struct QuorumStatus {
  raft::Role role = raft::Role::unattached;
  raft::Epoch epoch = 0;
  raft::ReplicaId leader_id = raft::kNoReplica;
  // While this node leads: the leader before it, if that one's address refused connections
  // before the election (raft::RaftNode::refused_predecessor).
  raft::ReplicaId refused_predecessor = raft::kNoReplica;
  raft::Offset high_watermark = 0;
  raft::Offset log_end_offset = 0;
  raft::Offset applied_offset = 0;
  // This node has applied everything the quorum had committed when it joined: a leader whose
  // epoch-start entry committed, or a replica that heard the leader's high watermark.
  bool caught_up = false;
  // When this node last knew its applied metadata was current (raft::RaftNode::confirmed_at,
  // counted only once everything committed is applied); steady ms, -1 before the first.
  int64_t confirmed_at_ms = -1;
};

struct ProposeResult {
  bool ok = false;
  raft::Offset offset = -1;
  std::string error;  // why not, when !ok
};

// The log the state machine writes to.
class QuorumLog {
 public:
  virtual ~QuorumLog() = default;
  virtual QuorumStatus status() const = 0;
  // Appends `payload` as one entry. The future completes once the entry is committed and the
  // listener has applied it; it fails at once on a node that does not lead (or has not caught
  // up), and later if leadership moves before the entry commits (it may still commit under
  // the next leader: the outcome of a failed proposal is unknown, as with any timeout).
  virtual std::future<ProposeResult> propose(std::string payload) = 0;
};

}  // namespace brokerd::quorum
