#pragma once
// Runs this node's replica of the metadata quorum: the pure raft::RaftNode bound to a thread
// of its own (so an fsync of the metadata log never stalls a reactor serving clients), to time
// (a tick every few milliseconds), to the on-disk stores in the metadata log directory, and to
// the network (outbound PeerClients to the other voters; inbound requests arrive from the
// controller listener through handle()). Committed entries and snapshots go to the listener,
// on the driver thread, in log order.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "brokerd/quorum/voters.h"
#include "brokerd/raft/disk_log.h"
#include "brokerd/raft/messages.h"
#include "brokerd/raft/persistence.h"
#include "brokerd/raft/types.h"
#include "brokerd/security/sasl_client.h"

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

struct QuorumOptions {
  int32_t node_id = -1;
  std::string cluster_id;
  std::vector<Voter> voters;  // this node among them when it is a voter
  std::filesystem::path dir;  // <metadata.log.dir>/__cluster_metadata-0
  int64_t election_timeout_ms = 1000;
  int64_t fetch_timeout_ms = 2000;
  int64_t request_timeout_ms = 2000;  // an unanswered request closes its connection
  int64_t fetch_backoff_ms = 20;
  int32_t max_fetch_entries = 512;
  // A snapshot of the state machine is taken once this many bytes of entries were applied
  // since the last one, and the log below it is dropped
  // (metadata.log.max.record.bytes.between.snapshots).
  int64_t snapshot_bytes = 20LL << 20;
  int64_t tick_ms = 5;
  // What this node presents to the controller listener of the others (quorum peers,
  // registration, forwarded changes): none unless that listener is SASL_*.
  security::ClientCredentials credentials;
  // The metadata log's test-build switches (raft/disk_log.h): power-loss simulation and the
  // injected missing fsync. Left alone outside test builds.
  raft::DiskRaftLogOptions log;
};

// What the driver knows right now (thread-safe copy, refreshed after every step).
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

class QuorumDriver {
 public:
  QuorumDriver(QuorumOptions options, QuorumListener* listener);
  ~QuorumDriver();  // stop()
  QuorumDriver(const QuorumDriver&) = delete;
  QuorumDriver& operator=(const QuorumDriver&) = delete;

  // Opens the stores and starts the thread. Throws when the stores cannot be opened.
  void start();
  // A leader resigns first (EndQuorumEpoch, so the others elect at once); then the thread
  // stops. Waits at most `resign_wait_ms` for the resignation to go out.
  void stop(int64_t resign_wait_ms = 200);

  const QuorumOptions& options() const { return options_; }
  bool is_voter() const;

  // An inbound KRaft request from replica `from`: runs the core on the driver thread and
  // returns its answer. Callable from any executor's coroutine.
  boost::asio::awaitable<raft::MessageBody> handle(raft::ReplicaId from, raft::MessageBody request);
  // DescribeQuorum, answered from the core on the driver thread. Times are wall-clock ms.
  boost::asio::awaitable<raft::DescribeQuorumResponse> describe();

  QuorumStatus status() const;

  // Appends `payload` as one entry. The future completes once the entry is committed and the
  // listener has applied it; it fails at once on a node that does not lead (or has not caught
  // up), and later if leadership moves before the entry commits (it may still commit under
  // the next leader: the outcome of a failed proposal is unknown, as with any timeout).
  std::future<ProposeResult> propose(std::string payload);

  struct Impl;

 private:
  QuorumOptions options_;
  std::shared_ptr<Impl> impl_;
};

}  // namespace brokerd::quorum
