#pragma once
// The invariants, checked after every simulated step and at every append and apply.
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim_types.h"

namespace brokerd::raft::sim {

class Checker {
 public:
  // Log matching: an (offset, epoch) pair names one log prefix, whoever holds it.
  void on_append(ReplicaId node, const Entry& e, uint64_t chain);
  // State machine safety: every replica applies the same entry at an offset.
  void on_apply(const SimNode& n, const Entry& e);
  void on_snapshot_load(const SimNode& n, Offset offset, uint64_t chain);
  // Election safety, monotonic high watermark, commits recorded, leader completeness.
  void after_step(std::vector<SimNode>& nodes);

  bool failed() const { return violation_.has_value(); }
  const std::string& violation() const { return *violation_; }
  Offset committed_end() const { return static_cast<Offset>(committed_.size()); }
  std::optional<uint64_t> committed_chain(Offset o) const;
  int64_t elections() const { return static_cast<int64_t>(leaders_.size()); }
  void fail(std::string message);

 private:
  void record_commits(SimNode& n);
  void check_leader_completeness(const SimNode& n);

  struct KeyHash {
    size_t operator()(const std::pair<Offset, Epoch>& k) const {
      return std::hash<int64_t>{}(k.first * 1000003 + k.second);
    }
  };
  std::optional<std::string> violation_;
  std::map<Epoch, ReplicaId> leaders_;
  std::unordered_map<std::pair<Offset, Epoch>, uint64_t, KeyHash> appended_;
  std::vector<uint64_t> committed_;           // prefix chain at each committed offset
  std::map<Epoch, Offset> committed_by_epoch_;  // end of the prefix known committed at an epoch
};

}  // namespace brokerd::raft::sim
