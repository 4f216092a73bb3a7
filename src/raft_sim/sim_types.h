#pragma once
// Shared pieces of the simulator: options, statistics, and one simulated machine.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "brokerd/raft/memory_persistence.h"
#include "brokerd/raft/node.h"

namespace brokerd::raft::sim {

inline constexpr int64_t kTickMs = 10;  // every replica ticks this often

struct SimOptions {
  int voters = 3;
  int observers = 1;
  int64_t steps = 10000;            // events in the fault phase of each seed
  int64_t heal_limit_ms = 60000;    // after healing, a leader and a commit must come within this
  uint32_t bugs = 0;
  bool trace = false;               // print every event as it happens
};

struct SimStats {
  int64_t steps = 0;
  int64_t sim_time_ms = 0;
  int64_t elections = 0;       // distinct (epoch, leader) pairs observed
  int64_t committed = 0;       // entries in the committed prefix at the end
  int64_t acked = 0;           // client proposals acknowledged as committed
  int64_t messages = 0;
  int64_t crashes = 0;
  int64_t snapshots_installed = 0;
  int64_t heal_ms = 0;         // simulated time from heal to a stable, committing cluster

  void add(const SimStats& o) {
    steps += o.steps;
    sim_time_ms += o.sim_time_ms;
    elections += o.elections;
    committed += o.committed;
    acked += o.acked;
    messages += o.messages;
    crashes += o.crashes;
    snapshots_installed += o.snapshots_installed;
    heal_ms = std::max(heal_ms, o.heal_ms);
  }
};

// One machine: its disks survive crashes, the RaftNode and the state machine do not.
struct SimNode {
  ReplicaId id = kNoReplica;
  MemoryRaftLog log;
  MemoryQuorumStateStore quorum_state;
  MemorySnapshotStore snapshots;
  std::unique_ptr<RaftNode> raft;  // null while down
  int incarnation = 0;
  bool slow_disk = false;
  // The state machine: a chain hash over every applied entry.
  Offset sm_offset = 0;
  uint64_t sm_chain = 0;
  int64_t apply_since_snapshot = 0;
  Offset last_hw = 0;  // for the monotonic high watermark check
  Role last_role = Role::unattached;
  Epoch last_epoch = 0;
  ReplicaId last_vote = kNoReplica;
};

std::string encode_state(Offset offset, uint64_t chain);
bool decode_state(const std::string& data, Offset& offset, uint64_t& chain);

}  // namespace brokerd::raft::sim
