#include "checker.h"

#include <sstream>

namespace brokerd::raft::sim {

void Checker::fail(std::string message) {
  if (!violation_) violation_ = std::move(message);
}

std::optional<uint64_t> Checker::committed_chain(Offset o) const {
  if (o < 0 || o >= committed_end()) return std::nullopt;
  return committed_[static_cast<size_t>(o)];
}

void Checker::on_append(ReplicaId node, const Entry& e, uint64_t chain) {
  auto [it, fresh] = appended_.emplace(std::make_pair(e.offset, e.epoch), chain);
  if (!fresh && it->second != chain) {
    std::ostringstream o;
    o << "log matching: node " << node << " appended offset " << e.offset << " epoch " << e.epoch
      << " on a prefix that differs from another replica's";
    fail(o.str());
  }
}

void Checker::on_apply(const SimNode& n, const Entry& e) {
  std::ostringstream o;
  if (e.offset != n.sm_offset - 1) {
    o << "state machine safety: node " << n.id << " applied offset " << e.offset
      << " out of order";
    return fail(o.str());
  }
  if (e.offset < committed_end()) {
    if (committed_[static_cast<size_t>(e.offset)] != n.sm_chain) {
      o << "state machine safety: node " << n.id << " applied a different entry at offset "
        << e.offset << " (epoch " << e.epoch << ") than was committed";
      fail(o.str());
    }
  } else if (e.offset == committed_end()) {
    committed_.push_back(n.sm_chain);
  } else {
    o << "state machine safety: node " << n.id << " applied offset " << e.offset
      << " beyond the committed prefix " << committed_end();
    fail(o.str());
  }
}

void Checker::on_snapshot_load(const SimNode& n, Offset offset, uint64_t chain) {
  if (offset == 0) return;
  auto c = committed_chain(offset - 1);
  if (!c || *c != chain) {
    std::ostringstream o;
    o << "state machine safety: node " << n.id << " loaded a snapshot at " << offset
      << " that is not the committed prefix";
    fail(o.str());
  }
}

void Checker::record_commits(SimNode& n) {
  const Offset hw = n.raft->high_watermark();
  auto& log = n.log;
  while (committed_end() < hw && !failed()) {
    auto c = log.chain_at(committed_end());
    if (!c) {
      std::ostringstream o;
      o << "node " << n.id << " has high watermark " << hw << " beyond what its log holds";
      return fail(o.str());
    }
    committed_.push_back(*c);
  }
  if (hw > 0) {
    auto c = log.chain_at(hw - 1);
    if (c && *c != committed_[static_cast<size_t>(hw - 1)]) {
      std::ostringstream o;
      o << "committed entry lost: node " << n.id << " (epoch " << n.raft->epoch()
        << ") has high watermark " << hw << " over entries that differ from the committed ones";
      fail(o.str());
    }
    Offset& known = committed_by_epoch_[n.raft->epoch()];
    known = std::max(known, hw);
  }
}

void Checker::check_leader_completeness(const SimNode& n) {
  const Epoch epoch = n.raft->epoch();
  Offset need = 0;
  for (auto it = committed_by_epoch_.begin(); it != committed_by_epoch_.end() && it->first < epoch;
       ++it)
    need = std::max(need, it->second);
  if (need == 0) return;
  const auto& log = n.log;
  if (need - 1 < log.start_offset() - 1) return;  // inside its snapshot, checked when loaded
  auto c = log.chain_at(need - 1);
  if (!c || *c != committed_[static_cast<size_t>(need - 1)]) {
    std::ostringstream o;
    o << "leader completeness: leader " << n.id << " of epoch " << epoch
      << " lacks entries committed below offset " << need << " (its log ends at "
      << log.end_offset() << ")";
    fail(o.str());
  }
}

void Checker::after_step(std::vector<SimNode>& nodes) {
  for (auto& n : nodes) {
    if (!n.raft || failed()) continue;
    const auto& r = *n.raft;
    if (r.role() == Role::leader) {
      auto [it, fresh] = leaders_.emplace(r.epoch(), r.id());
      if (!fresh && it->second != r.id()) {
        std::ostringstream o;
        o << "election safety: nodes " << it->second << " and " << r.id()
          << " both lead epoch " << r.epoch();
        fail(o.str());
      }
    }
    if (r.high_watermark() < n.last_hw) {
      std::ostringstream o;
      o << "high watermark of node " << n.id << " went back from " << n.last_hw << " to "
        << r.high_watermark();
      fail(o.str());
    }
    n.last_hw = r.high_watermark();
    record_commits(n);
  }
  for (auto& n : nodes) {
    if (n.raft && !failed() && n.raft->role() == Role::leader) check_leader_completeness(n);
  }
}

}  // namespace brokerd::raft::sim
