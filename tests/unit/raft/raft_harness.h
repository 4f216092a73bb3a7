#pragma once
// A single RaftNode over in-memory persistence, with helpers to drive it into a role and to
// pick messages out of its output.
#include <memory>
#include <vector>

#include "brokerd/raft/memory_persistence.h"
#include "brokerd/raft/node.h"

namespace brokerd::raft::testing {

struct Harness {
  MemoryRaftLog log;
  MemoryQuorumStateStore quorum_state;
  MemorySnapshotStore snapshots;
  RaftConfig config;
  std::unique_ptr<RaftNode> node;
  int64_t now = 0;
  RaftOutput last;

  explicit Harness(ReplicaId id = 1, std::vector<ReplicaId> voters = {1, 2, 3}) {
    config.node_id = id;
    config.voters = std::move(voters);
    config.random_seed = 7;
  }
  void start() {
    node = std::make_unique<RaftNode>(config, log, quorum_state, snapshots);
    node->start(now);
    last = node->take_output();
  }
  // Simulated crash and restart over the same disks.
  void restart() {
    log.crash();
    start();
  }
  RaftOutput& receive(ReplicaId from, MessageBody body, int64_t correlation = 1) {
    node->receive(Message{from, config.node_id, correlation, std::move(body)}, now);
    last = node->take_output();
    return last;
  }
  RaftOutput& tick_until(int64_t t) {
    RaftOutput all;
    for (; now <= t; now += 10) {
      node->tick(now);
      auto o = node->take_output();
      for (auto& m : o.messages) all.messages.push_back(std::move(m));
      for (auto& e : o.committed) all.committed.push_back(std::move(e));
      if (o.flush_up_to) all.flush_up_to = o.flush_up_to;
      if (o.load_snapshot) all.load_snapshot = std::move(o.load_snapshot);
    }
    last = std::move(all);
    return last;
  }
  RaftOutput& flush() {
    log.flush(log.end_offset());
    node->on_log_flushed(now);
    last = node->take_output();
    return last;
  }
  // Entries of the given epochs, appended directly to the log and flushed.
  void seed_log(const std::vector<Epoch>& epochs) {
    std::vector<Entry> es;
    for (Epoch e : epochs)
      es.push_back(Entry{log.end_offset() + static_cast<Offset>(es.size()), e, false, "x"});
    log.append(es);
    log.flush(log.end_offset());
  }
  // Wins an election with the votes of voter 2 (pre-vote, then vote).
  void become_leader() {
    tick_until(now + 3 * config.election_timeout_ms);
    receive(2, VoteResponse{Errc::none, kNoReplica, node->epoch(), true, true});
    receive(2, VoteResponse{Errc::none, kNoReplica, node->epoch(), true, false});
    flush();
  }
  // Follows `leader` at `epoch`, as after a BeginQuorumEpoch.
  void become_follower(ReplicaId leader, Epoch epoch) {
    receive(leader, BeginQuorumEpochRequest{config.node_id, leader, epoch});
  }

  template <typename T>
  std::vector<std::pair<Message, T>> sent(const RaftOutput& o) const {
    std::vector<std::pair<Message, T>> r;
    for (const auto& m : o.messages)
      if (auto* b = std::get_if<T>(&m.body)) r.emplace_back(m, *b);
    return r;
  }
  template <typename T>
  std::vector<std::pair<Message, T>> sent() const {
    return sent<T>(last);
  }
};

}  // namespace brokerd::raft::testing
