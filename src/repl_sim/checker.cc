#include "checker.h"

#include <algorithm>

namespace brokerd::replication::sim {

namespace {

std::string describe(const Entry& e) {
  return "epoch " + std::to_string(e.epoch) + " p" + std::to_string(e.record.producer) + "#" +
         std::to_string(e.record.sequence) + "=" + std::to_string(e.record.value);
}

}  // namespace

void Checker::fail(std::string what) {
  if (!violation_) violation_ = std::move(what);
}

void Checker::commit(Offset offset, const Entry& e) {
  committed_.push_back(e);
  if (!values_.insert(e.record.value).second)
    fail("value " + std::to_string(e.record.value) + " committed twice, again at offset " + std::to_string(offset) +
         " as " + describe(e) + " (a write answered \"not written\" was written)");
  auto [it, fresh] = last_sequence_.try_emplace(e.record.producer, e.record.sequence);
  if (!fresh) {
    if (e.record.sequence <= it->second)
      fail("producer " + std::to_string(e.record.producer) + " sequence " + std::to_string(e.record.sequence) +
           " committed at offset " + std::to_string(offset) + " after sequence " + std::to_string(it->second));
    it->second = e.record.sequence;
  }
  auto acked = acked_.find(offset);
  if (acked != acked_.end() && !(acked->second == e.record))
    fail("acknowledged write lost: offset " + std::to_string(offset) + " committed as " + describe(e));
}

void Checker::isr_member(int node, Offset log_end, int leader, Offset leader_hw) {
  if (log_end < leader_hw)
    fail("node " + std::to_string(node) + " is in the controller's ISR but ends at " + std::to_string(log_end) +
         ", below leader " + std::to_string(leader) + "'s high watermark " + std::to_string(leader_hw));
}

void Checker::observe(int node, SimLog& log, Offset hw) {
  const auto n = static_cast<size_t>(node);
  verified_[n] = std::min(verified_[n], log.take_low_water());
  if (hw < last_hw_[n])
    fail("node " + std::to_string(node) + " high watermark went back from " + std::to_string(last_hw_[n]) + " to " +
         std::to_string(hw));
  last_hw_[n] = hw;
  for (Offset o = std::max(verified_[n], log.start_offset()); o < hw; ++o) {
    const Entry* e = log.entry_at(o);
    if (!e) {
      fail("node " + std::to_string(node) + " has no entry at " + std::to_string(o) + " below its high watermark " +
           std::to_string(hw));
      return;
    }
    if (o < static_cast<Offset>(committed_.size())) {
      if (!(committed_[static_cast<size_t>(o)] == *e))
        fail("replicas diverge below the high watermark: node " + std::to_string(node) + " has " + describe(*e) +
             " at offset " + std::to_string(o) + ", committed was " + describe(committed_[static_cast<size_t>(o)]));
    } else if (o == static_cast<Offset>(committed_.size())) {
      commit(o, *e);
    } else {
      break;  // a gap below this log's start: nothing to compare yet
    }
  }
  verified_[n] = std::max(verified_[n], hw);
}

void Checker::restarted(int node) {
  last_hw_[static_cast<size_t>(node)] = 0;
  verified_[static_cast<size_t>(node)] = 0;
}

void Checker::acknowledged(const Record& r, Offset offset) {
  auto [it, fresh] = acked_.try_emplace(offset, r);
  if (!fresh && !(it->second == r))
    fail("two writes acknowledged at offset " + std::to_string(offset));
  if (offset < static_cast<Offset>(committed_.size()) && !(committed_[static_cast<size_t>(offset)].record == r))
    fail("acknowledged write not committed: offset " + std::to_string(offset) + " holds " +
         describe(committed_[static_cast<size_t>(offset)]));
}

void Checker::settled(const std::vector<const SimLog*>& logs, int leader, Offset leader_hw) {
  if (leader < 0) {
    fail("no leader after the faults healed");
    return;
  }
  for (const auto& [offset, r] : acked_) {
    if (offset >= leader_hw) {
      fail("acknowledged write at offset " + std::to_string(offset) + " is past the settled high watermark " +
           std::to_string(leader_hw));
      return;
    }
  }
  const SimLog& lead = *logs[static_cast<size_t>(leader)];
  for (size_t n = 0; n < logs.size(); ++n) {
    if (logs[n]->end_offset() != lead.end_offset()) {
      fail("node " + std::to_string(n) + " ends at " + std::to_string(logs[n]->end_offset()) + ", the leader at " +
           std::to_string(lead.end_offset()) + " after settling");
      return;
    }
    for (Offset o = lead.start_offset(); o < lead.end_offset(); ++o) {
      const Entry* a = lead.entry_at(o);
      Entry copy = a ? *a : Entry{};
      const Entry* b = logs[n]->entry_at(o);
      if (!a || !b || !(copy == *b)) {
        fail("node " + std::to_string(n) + " differs from the leader at offset " + std::to_string(o) + " after settling");
        return;
      }
    }
  }
}

}  // namespace brokerd::replication::sim
