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

#include "brokerd/quorum/quorum_log.h"
#include "brokerd/quorum/voters.h"
#include "brokerd/raft/disk_log.h"
#include "brokerd/raft/messages.h"
#include "brokerd/raft/persistence.h"
#include "brokerd/raft/types.h"
#include "brokerd/security/sasl_client.h"

namespace brokerd::quorum {

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

class QuorumDriver final : public QuorumLog {
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

  // QuorumLog
  QuorumStatus status() const override;
  std::future<ProposeResult> propose(std::string payload) override;

  struct Impl;

 private:
  QuorumOptions options_;
  std::shared_ptr<Impl> impl_;
};

}  // namespace brokerd::quorum
