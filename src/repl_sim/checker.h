#pragma once
// The invariants of replication, checked while the simulation runs and once it settles:
//  - what any replica holds below its high watermark is the same on every replica (the
//    committed prefix) and never changes;
//  - a replica's high watermark never goes back while it runs;
//  - every acknowledged write is in the committed prefix at the offset it was acknowledged at;
//  - each producer's sequences appear in the committed prefix in order, each once;
//  - no value is committed twice (a write answered "not written" was not written);
//  - each member of the controller's ISR that may be elected (running, and whole since it
//    last joined) holds everything below the leader's high watermark.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim_log.h"

namespace brokerd::replication::sim {

class Checker {
 public:
  explicit Checker(int nodes) : verified_(static_cast<size_t>(nodes), 0), last_hw_(static_cast<size_t>(nodes), 0) {}

  // After every event, for each running replica.
  void observe(int node, SimLog& log, Offset high_watermark);
  // The replica restarted: its high watermark may start lower (it was checkpointed).
  void restarted(int node);
  void acknowledged(const Record& r, Offset offset);
  // `node`, in the controller's ISR and electable, ends at `log_end`; `leader` is at `leader_hw`.
  void isr_member(int node, Offset log_end, int leader, Offset leader_hw);
  // Once everything is healed and quiet: the leader's committed log holds every acknowledged
  // write, and every replica agrees with it.
  void settled(const std::vector<const SimLog*>& logs, int leader, Offset leader_hw);

  bool ok() const { return !violation_; }
  const std::string& violation() const { return *violation_; }
  size_t committed() const { return committed_.size(); }
  size_t acknowledged_count() const { return acked_.size(); }

 private:
  void fail(std::string what);
  void commit(Offset offset, const Entry& e);

  std::vector<Entry> committed_;
  std::map<Offset, Record> acked_;
  std::map<int32_t, int32_t> last_sequence_;  // per producer, in the committed prefix
  std::set<int64_t> values_;                  // in the committed prefix
  std::vector<Offset> verified_;              // per node: its log agrees with committed_ below this
  std::vector<Offset> last_hw_;
  std::optional<std::string> violation_;
};

}  // namespace brokerd::replication::sim
