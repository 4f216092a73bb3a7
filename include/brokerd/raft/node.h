#pragma once
// One replica of the metadata quorum as a pure state machine (KRaft semantics).
//
// Inputs: start(), tick(), receive(), request_failed(), on_log_flushed(), propose(), resign(),
// take_snapshot().
// Outputs, collected with take_output(): messages to send, a flush barrier for the log,
// committed entries to apply in order, and a snapshot to load into the state machine.
// The caller owns the clock, the network and the disks; every time is a millisecond count it
// passes in. The core touches the persistence objects only through their interfaces.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "brokerd/raft/config.h"
#include "brokerd/raft/messages.h"
#include "brokerd/raft/persistence.h"
#include "brokerd/raft/prng.h"

namespace brokerd::raft {

struct RaftOutput {
  std::vector<Message> messages;
  // Flush the log up to this offset, then call on_log_flushed(). Followers do not report
  // entries as replicated before that, and the leader counts only its flushed prefix.
  std::optional<Offset> flush_up_to;
  // Load this snapshot into the state machine first (it replaces everything applied so far)...
  std::optional<Snapshot> load_snapshot;
  // ...then apply these, in order. Control entries are included so offsets stay contiguous.
  std::vector<Entry> committed;
};

class RaftNode {
 public:
  RaftNode(RaftConfig config, RaftLog& log, QuorumStateStore& quorum_state,
           SnapshotStore& snapshots);

  // Loads the quorum state and the latest snapshot; call once (a restart is a new RaftNode).
  void start(int64_t now);
  void tick(int64_t now);
  void receive(const Message& message, int64_t now);
  // The network gave up on the request `correlation_id` sent to `peer`: the connection broke
  // or could not be made. A fetch that carried it is sent again after the backoff instead of
  // waiting out its timeout. `refused` means nothing listens at the peer's address (its process
  // is gone): a follower of that leader stops waiting for it and looks for a new one within a
  // few request timeouts (its turn among the voters); pre-vote still asks the others, so a
  // leader they hear from keeps its place.
  void request_failed(ReplicaId peer, int64_t correlation_id, bool refused, int64_t now);
  // The log finished a flush requested through RaftOutput::flush_up_to.
  void on_log_flushed(int64_t now);
  // Appends a client entry on the leader; nullopt on any other replica.
  std::optional<OffsetAndEpoch> propose(std::string payload, int64_t now);
  // Leader only: stop leading and ask the voters to elect a successor.
  bool resign(int64_t now);
  // The state machine serialised itself at `end_offset` (<= applied offset). The core saves the
  // snapshot and drops the log below it.
  bool take_snapshot(Offset end_offset, std::string data);
  DescribeQuorumResponse describe_quorum(int64_t now) const;
  RaftOutput take_output();

  ReplicaId id() const { return config_.node_id; }
  Role role() const { return role_; }
  Epoch epoch() const { return epoch_; }
  ReplicaId leader_id() const { return leader_id_; }
  // While this replica leads: the leader before it, when that one's address refused this
  // replica's connections before the election (its process is most likely gone); else none.
  ReplicaId refused_predecessor() const { return role_ == Role::leader ? refused_predecessor_ : kNoReplica; }
  ReplicaId voted_for() const { return voted_for_; }
  Offset high_watermark() const { return hw_; }
  Offset applied_offset() const { return applied_; }
  Offset epoch_start_offset() const { return epoch_start_offset_; }
  bool is_voter() const;
  const RaftLog& log() const { return log_; }
  // When this replica last knew it held everything the quorum had committed: for a leader,
  // the time by which a majority of voters had last fetched from it; for a follower or
  // observer, when it sent the last fetch whose answer's high watermark its log reached (the
  // answer may have waited in a socket while this process stood still). -1 before the first.
  // Steady milliseconds, as `now`. Fetches a leader takes in within a fetch timeout of a stall
  // (see note_run) vouch only for the time before it: they may have queued while it stood
  // still and the others elected a new leader.
  int64_t confirmed_at(int64_t now) const;

 private:
  struct Progress {
    Offset end_offset = -1;
    int64_t last_fetch = -1;
    int64_t last_caught_up = -1;
    bool acknowledged = false;  // fetched or answered BeginQuorumEpoch in this epoch
  };
  struct SnapshotFetch {
    OffsetAndEpoch id;
    std::string data;
  };

  // Handlers, one file each (handle_*.cc).
  void handle_vote_request(const Message& m, const VoteRequest& r, int64_t now);
  void handle_vote_response(const Message& m, const VoteResponse& r, int64_t now);
  void handle_begin_quorum_epoch_request(const Message& m, const BeginQuorumEpochRequest& r,
                                         int64_t now);
  void handle_begin_quorum_epoch_response(const Message& m, const BeginQuorumEpochResponse& r,
                                          int64_t now);
  void handle_end_quorum_epoch_request(const Message& m, const EndQuorumEpochRequest& r,
                                       int64_t now);
  void handle_end_quorum_epoch_response(const Message& m, const EndQuorumEpochResponse& r,
                                        int64_t now);
  void handle_fetch_request(const Message& m, const FetchRequest& r, int64_t now);
  void handle_fetch_response(const Message& m, const FetchResponse& r, int64_t now);
  void handle_fetch_snapshot_request(const Message& m, const FetchSnapshotRequest& r, int64_t now);
  void handle_fetch_snapshot_response(const Message& m, const FetchSnapshotResponse& r,
                                      int64_t now);

  // State transitions (transitions.cc). Staying in the same epoch keeps the vote.
  void become_unattached(Epoch epoch, int64_t now);
  void become_follower(Epoch epoch, ReplicaId leader, int64_t now);
  void become_prospective(int64_t now);
  void become_candidate(int64_t now);
  void become_leader(int64_t now);
  void become_resigned(int64_t now);
  // Moves to a newer epoch (or learns the leader of the current one) seen in a message.
  // Returns true if the state changed.
  bool observe_epoch(Epoch epoch, ReplicaId leader, int64_t now);
  void persist_quorum_state();
  void reset_election_timer(int64_t now);

  // Leader duties (leader.cc).
  void update_high_watermark();
  void leader_tick(int64_t now);
  void send_begin_quorum_epoch(int64_t now);
  // Follower and observer duties (follower.cc).
  void follower_tick(int64_t now);
  // The leader answered (or was just followed): it is alive until a fetch timeout from now.
  void heard_from_leader(int64_t now);
  void send_fetch(ReplicaId to, int64_t now);
  // Election duties (election.cc).
  void election_tick(int64_t now);
  void send_vote_requests(int64_t now);
  bool candidate_log_up_to_date(Epoch last_epoch, Offset end_offset) const;

  // Plumbing (node.cc).
  int64_t send(ReplicaId to, MessageBody body);
  void reply(const Message& request, MessageBody body);
  void request_flush();
  void emit_committed();
  void set_high_watermark(Offset hw);
  // The leader this replica believes is serving, for answers to others. A resigned leader
  // names nobody, so its followers stop waiting for it.
  ReplicaId known_leader() const {
    return role_ == Role::leader || role_ == Role::follower ? leader_id_ : kNoReplica;
  }
  size_t majority() const { return config_.voters.size() / 2 + 1; }

  RaftConfig config_;
  RaftLog& log_;
  QuorumStateStore& quorum_state_;
  SnapshotStore& snapshots_;
  Prng rng_;
  RaftOutput out_;
  int64_t next_correlation_ = 0;

  Role role_ = Role::unattached;
  Epoch epoch_ = 0;
  ReplicaId voted_for_ = kNoReplica;
  ReplicaId leader_id_ = kNoReplica;
  Offset hw_ = 0;
  Offset applied_ = 0;
  Offset flush_requested_ = 0;
  int64_t election_deadline_ = 0;

  // Elections.
  std::set<ReplicaId> granted_;
  std::set<ReplicaId> rejected_;
  int64_t vote_resend_at_ = 0;

  // Leader.
  Offset epoch_start_offset_ = -1;
  std::map<ReplicaId, Progress> progress_;
  int64_t leader_since_ = 0;
  int64_t begin_resend_at_ = 0;

  // The leader this voter stopped hearing from before it became prospective. Pre-vote
  // rejections that name it again carry no news (the rejecting voter's own fetch timer may
  // simply not have expired yet): in that round they count as rejections instead of sending
  // this voter back to a leader it already knows to be silent. Forgotten at the next round.
  ReplicaId lost_leader_ = kNoReplica;

  // Follower / observer.
  int64_t fetch_deadline_ = 0;   // the leader is presumed gone after this
  // The leader whose address refused a connection since a leader last answered; kept through
  // the election that follows, to become refused_predecessor_ if this replica wins it.
  ReplicaId refused_leader_ = kNoReplica;
  ReplicaId refused_predecessor_ = kNoReplica;
  int64_t next_fetch_at_ = 0;
  int64_t inflight_ = 0;         // correlation id of the outstanding fetch, 0 if none
  int64_t inflight_deadline_ = 0;
  int64_t confirmed_at_ = -1;    // see confirmed_at()
  int64_t fetch_sent_at_ = -1;   // when the outstanding fetch was sent

  // Stalls: a gap of half a fetch timeout between two runs of this core (a tick or an input)
  // means the process stood still (SIGSTOP, swapping, a frozen VM) long enough for the others
  // to have moved on. Only confirmed_at() looks at them.
  void note_run(int64_t now);
  int64_t last_run_ = -1;
  int64_t stalled_from_ = -1;    // the last run before the latest stall
  int64_t resumed_at_ = -1;      // the first run after it
  size_t discover_index_ = 0;
  std::optional<SnapshotFetch> snapshot_fetch_;
};

}  // namespace brokerd::raft
