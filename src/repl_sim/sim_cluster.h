#pragma once
// A deterministic simulation of one partition replicated on N brokers: the replication core on
// every broker, a controller model (registrations, heartbeats, fencing, elections,
// AlterPartition), idempotent acks=all producers, and a network that delays, drops, reorders
// and cuts messages. Faults from the seed: crashes that lose unflushed data, restarts, one-way
// and two-way cuts, isolated leaders, preferred-leader moves.
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <variant>
#include <vector>

#include "brokerd/raft/prng.h"
#include "brokerd/replication/replica.h"
#include "checker.h"
#include "sim_log.h"

namespace brokerd::replication::sim {

struct SimOptions {
  int nodes = 3;
  int64_t duration_ms = 20'000;  // of faults and writes, before the settling phase
  uint32_t bugs = 0;
  bool trace = false;
};

struct SimStats {
  int64_t events = 0;
  int64_t acked = 0;
  int64_t committed = 0;
  int64_t crashes = 0;
  int64_t leader_changes = 0;
  int64_t truncations = 0;
  void add(const SimStats& o) {
    events += o.events;
    acked += o.acked;
    committed += o.committed;
    crashes += o.crashes;
    leader_changes += o.leader_changes;
    truncations += o.truncations;
  }
};

// Messages on the simulated network.
struct ProduceReq { int32_t producer; Record record; uint64_t id; };
struct ProduceResp { uint64_t id; ErrorCode error; Offset offset; };
struct FetchResp { FetchResponse response; std::vector<std::vector<std::byte>> storage; };
struct AlterResp { AlterPartitionRequest request; ErrorCode error; PartitionState state; };
struct Heartbeat { int node; int incarnation; };
// The controller's view as of the broker's latest registration: a restarted broker acts on no
// state older than its own registration (a real broker replays the metadata log past it first).
struct MetadataPush { PartitionState state; int incarnation; };
using Payload = std::variant<ProduceReq, ProduceResp, FetchRequest, FetchResp, EpochEndRequest, EpochEndResponse,
                             AlterPartitionRequest, AlterResp, Heartbeat, MetadataPush>;

class SimCluster {
 public:
  SimCluster(uint64_t seed, SimOptions options);
  bool run();
  const SimStats& stats() const { return stats_; }
  const std::string& violation() const { return checker_.violation(); }
  const std::deque<std::string>& trace_tail() const { return trace_; }

 private:
  struct Node {
    bool alive = true;
    int incarnation = 0;
    SimLog log;
    LeaderEpochCache epochs;       // the running copy
    LeaderEpochCache disk_epochs;  // the checkpoint (written on every change)
    Offset disk_hw = 0;
    std::unique_ptr<Replica> replica;
    int64_t request_sent = -1;     // the follower's request in flight, or -1
    int64_t next_request_at = 0;
    int64_t restart_at = -1;
    bool impaired = false;         // crashed since it was last in the ISR
    std::map<uint64_t, std::pair<int32_t, Offset>> produces;  // request id -> producer, offset
  };
  // An idempotent producer with one request in flight. When every attempt at a value was
  // answered "not written" (NOT_LEADER_OR_FOLLOWER), it may send the value again under a new
  // identity, as librdkafka does after an epoch bump: if a copy was written after all, the
  // value is committed twice.
  struct Producer {
    int32_t id = 0;        // its endpoint
    int32_t identity = 0;  // the producer id its records carry
    int32_t sequence = 0;
    int64_t value = 0;     // how many values it has had acknowledged
    bool maybe_written = false;  // an attempt at the current value went unanswered or "possibly written"
    uint64_t in_flight = 0;
    int64_t sent_at = 0;
    int64_t next_send = 0;
  };
  struct Event {
    int64_t at;
    uint64_t order;
    int from;
    int to;
    Payload payload;
    bool operator>(const Event& o) const { return at != o.at ? at > o.at : order > o.order; }
  };

  int controller_endpoint() const { return options_.nodes; }
  int producer_endpoint(int p) const { return options_.nodes + 1 + p; }
  static Record record_of(const Producer& pr);
  ReplicaConfig replica_config(int node) const;
  void send(int from, int to, Payload p);
  void deliver(const Event& e);
  void on_node_message(int node, int from, const Payload& p);
  void on_controller_message(int from, const Payload& p);
  void on_producer_message(int producer, const Payload& p);
  void drain(int node);
  void tick_nodes();
  void tick_controller();
  void tick_producers();
  void faults();
  void crash(int node);
  void restart(int node);
  void controller_change(PartitionState next, const char* why);
  void observe_all();
  void heal();
  void log(std::string line);

  SimOptions options_;
  raft::Prng rng_;
  int64_t now_ = 0;
  uint64_t order_ = 0;
  uint64_t next_id_ = 1;
  int32_t next_identity_ = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> queue_;
  std::vector<Node> nodes_;
  std::vector<Producer> producers_;
  std::vector<std::vector<bool>> cut_;  // cut_[from][to]: messages from `from` to `to` are lost
  bool faults_on_ = true;
  // The controller model.
  PartitionState partition_;
  std::vector<int64_t> last_heartbeat_;
  std::vector<int> known_incarnation_;
  BrokerLiveness live_;
  int32_t min_isr_ = 2;
  Checker checker_;
  SimStats stats_;
  std::deque<std::string> trace_;
};

}  // namespace brokerd::replication::sim
