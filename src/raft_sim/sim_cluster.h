#pragma once
// One simulated cluster driven by one seed: a discrete-event loop over message deliveries,
// ticks, disk flushes, faults and client proposals, checked after every event.
#include <deque>
#include <queue>
#include <string>
#include <vector>

#include "brokerd/raft/prng.h"
#include "checker.h"
#include "sim_types.h"

namespace brokerd::raft::sim {

class SimCluster {
 public:
  SimCluster(uint64_t seed, SimOptions options);
  // Runs the fault phase, heals everything and waits for liveness. False on a violation.
  bool run();
  const SimStats& stats() const { return stats_; }
  std::string violation() const { return checker_.failed() ? checker_.violation() : ""; }
  const std::deque<std::string>& trace_tail() const { return trace_; }

 private:
  enum class Kind { deliver, refused, tick, flush, crash, restart, chaos, propose };
  struct Event {
    int64_t time = 0;
    uint64_t seq = 0;
    Kind kind = Kind::tick;
    size_t node = 0;
    int incarnation = 0;
    Offset value = 0;
    Message msg;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time != b.time ? a.time > b.time : a.seq > b.seq;
    }
  };
  struct Pending {
    size_t node;
    int incarnation;
    OffsetAndEpoch at;
    std::string payload;
  };

  void schedule(Event e);
  void step(Event& e);
  void drain(SimNode& n);
  void apply_output(SimNode& n, RaftOutput& out);
  void send(const Message& m);
  // A request that reached a crashed node: its sender's connection may be refused (refuse_),
  // else the request is just lost, as when a host is gone with its kernel.
  void refuse(const Message& request);
  void start_node(SimNode& n);
  void crash_node(SimNode& n);
  // Crashes `n` after `delay` ms and restarts it `down` ms later.
  void schedule_crash(const SimNode& n, int64_t delay, int64_t down);
  void aim_crashes(SimNode& n);
  void chaos();
  void heal();
  void propose();
  void check_acks();
  bool liveness_reached();
  void note(const std::string& line);
  RaftConfig config_for(const SimNode& n) const;

  uint64_t seed_;
  SimOptions opt_;
  Prng rng_;
  Checker checker_;
  SimStats stats_;
  std::vector<SimNode> nodes_;
  std::priority_queue<Event, std::vector<Event>, Later> events_;
  uint64_t seq_ = 0;
  int64_t now_ = 0;
  std::deque<std::string> trace_;

  // Network and fault model.
  std::vector<std::vector<bool>> blocked_;  // [from][to]
  double loss_ = 0;
  double duplicate_ = 0;
  int64_t delay_max_ = 10;
  // Per-seed fault profile: crashes aimed at the moments right after a vote or an election.
  double crash_after_vote_ = 0;
  double crash_after_election_ = 0;
  int32_t max_fetch_entries_ = 8;
  double refuse_ = 0;  // the chance a request to a crashed node is refused rather than lost
  bool starting_ = false;  // output drained inside start_node
  bool healed_ = false;
  // Half the seeds heal with the leader of the moment left dead for good: the others must
  // still elect one and commit.
  ReplicaId left_down_ = kNoReplica;
  int64_t healed_at_ = 0;

  // Client.
  int64_t proposals_ = 0;
  std::vector<Pending> pending_;
  std::optional<OffsetAndEpoch> marker_;
};

}  // namespace brokerd::raft::sim
