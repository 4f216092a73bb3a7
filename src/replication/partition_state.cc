#include "brokerd/replication/partition_state.h"

#include <algorithm>

namespace brokerd::replication {

namespace {

bool contains(const std::vector<BrokerId>& v, BrokerId b) { return std::find(v.begin(), v.end(), b) != v.end(); }

void erase(std::vector<BrokerId>& v, BrokerId b) { v.erase(std::remove(v.begin(), v.end(), b), v.end()); }

// Members removed from an ISR that is (or becomes) smaller than min ISR join the ELR. Once
// the ISR is back at min ISR the ELR empties: the high watermark moves again, and what it
// commits from then on is only on the ISR.
void move_to_elr(PartitionState& s, const std::vector<BrokerId>& removed, int32_t min_isr) {
  if (static_cast<int32_t>(s.isr.size()) >= min_isr) {
    s.elr.clear();
    return;
  }
  for (BrokerId b : removed)
    if (!contains(s.elr, b)) s.elr.push_back(b);
  for (BrokerId b : s.isr) erase(s.elr, b);
}

// Elects a new leader if the current one is gone; otherwise returns the state unchanged.
PartitionState reelect(PartitionState s, const BrokerLiveness& brokers, bool unclean_allowed, uint32_t bugs) {
  if (s.leader != kNoBroker && brokers.is_live(s.leader) && s.in_isr(s.leader)) return s;
  const BrokerId next = choose_leader(s, brokers, unclean_allowed, bugs);
  if (next == s.leader) return s;
  return with_leader(s, next);
}

}  // namespace

bool PartitionState::in_isr(BrokerId b) const { return contains(isr, b); }
bool PartitionState::in_elr(BrokerId b) const { return contains(elr, b); }
bool PartitionState::is_replica(BrokerId b) const { return contains(replicas, b); }
bool BrokerLiveness::is_live(BrokerId b) const { return contains(live, b); }

int64_t BrokerLiveness::epoch_of(BrokerId b) const {
  for (const auto& [id, epoch] : epochs)
    if (id == b) return epoch;
  return kNoBrokerEpoch;
}

BrokerId choose_leader(const PartitionState& s, const BrokerLiveness& brokers, bool unclean_allowed,
                       uint32_t bugs) {
  if (bugs & static_cast<uint32_t>(Bug::elect_outside_isr)) {
    for (BrokerId b : s.replicas)
      if (brokers.is_live(b)) return b;
  }
  for (BrokerId b : s.replicas)
    if (s.in_isr(b) && brokers.is_live(b)) return b;
  for (BrokerId b : s.replicas)
    if (s.in_elr(b) && brokers.is_live(b)) return b;
  if (unclean_allowed) {
    for (BrokerId b : s.replicas)
      if (brokers.is_live(b)) return b;
  }
  return kNoBroker;
}

PartitionState with_leader(const PartitionState& s, BrokerId leader) {
  PartitionState next = s;
  next.leader = leader;
  ++next.leader_epoch;
  ++next.partition_epoch;
  if (leader != kNoBroker && !next.in_isr(leader)) {
    // Led from the ELR (or uncleanly): the new leader is the whole ISR, and the members of the
    // old ISR (fenced, but holding everything committed) stay eligible.
    for (BrokerId b : s.isr)
      if (!contains(next.elr, b)) next.elr.push_back(b);
    next.isr = {leader};
    erase(next.elr, leader);
  }
  return next;
}

AlterPartitionResult apply_alter_partition(const PartitionState& s, const AlterPartitionRequest& r,
                                           const BrokerLiveness& brokers, int32_t min_isr) {
  if (r.leader != s.leader) return {ErrorCode::not_leader_or_follower, s};
  if (r.leader_epoch < s.leader_epoch) return {ErrorCode::fenced_leader_epoch, s};
  if (r.leader_epoch > s.leader_epoch) return {ErrorCode::unknown_leader_epoch, s};
  if (r.partition_epoch != s.partition_epoch) return {ErrorCode::invalid_update_version, s};
  if (!contains(r.new_isr, r.leader)) return {ErrorCode::invalid_request, s};
  for (size_t i = 0; i < r.new_isr.size(); ++i) {
    const BrokerId b = r.new_isr[i];
    if (!s.is_replica(b)) return {ErrorCode::invalid_replica_assignment, s};
    if (s.in_isr(b)) continue;
    if (!brokers.is_live(b)) return {ErrorCode::ineligible_replica, s};
    // Found in sync by an earlier process of that broker: what it held may be gone.
    const int64_t seen = i < r.broker_epochs.size() ? r.broker_epochs[i] : kNoBrokerEpoch;
    const int64_t now_epoch = brokers.epoch_of(b);
    if (seen != kNoBrokerEpoch && now_epoch != kNoBrokerEpoch && seen != now_epoch)
      return {ErrorCode::ineligible_replica, s};
  }
  PartitionState next = s;
  std::vector<BrokerId> removed;
  for (BrokerId b : s.isr)
    if (!contains(r.new_isr, b)) removed.push_back(b);
  next.isr.clear();
  for (BrokerId b : s.replicas)  // replica order, no duplicates
    if (contains(r.new_isr, b)) next.isr.push_back(b);
  move_to_elr(next, removed, min_isr);
  ++next.partition_epoch;
  return {ErrorCode::none, next};
}

PartitionState on_broker_fenced(const PartitionState& s, BrokerId broker, const BrokerLiveness& brokers,
                                int32_t min_isr, bool unclean_allowed, uint32_t bugs) {
  PartitionState next = s;
  if (next.in_isr(broker) && next.isr.size() > 1) {
    erase(next.isr, broker);
    move_to_elr(next, {broker}, min_isr);
    ++next.partition_epoch;
  }
  if (next.leader == broker) {
    const BrokerId leader = choose_leader(next, brokers, unclean_allowed, bugs);
    next = with_leader(next, leader);
  }
  return next;
}

PartitionState on_broker_unclean_restart(const PartitionState& s, BrokerId broker,
                                         const BrokerLiveness& brokers, int32_t min_isr,
                                         bool unclean_allowed, uint32_t bugs) {
  PartitionState next = s;
  // Out only if another replica is still eligible: the last one holding anything is kept
  // (whatever it lost, nobody has more).
  bool others = false;
  for (BrokerId b : s.isr) others = others || b != broker;
  for (BrokerId b : s.elr) others = others || b != broker;
  if (others && (next.in_isr(broker) || next.in_elr(broker))) {
    erase(next.isr, broker);
    erase(next.elr, broker);
    ++next.partition_epoch;
  }
  (void)min_isr;
  if (next.leader == broker || (next.leader != kNoBroker && !next.in_isr(next.leader))) {
    next = with_leader(next, choose_leader(next, brokers, unclean_allowed, bugs));
  } else if (next.leader == kNoBroker) {
    next = reelect(next, brokers, unclean_allowed, bugs);
  }
  return next;
}

PartitionState on_broker_unfenced(const PartitionState& s, const BrokerLiveness& brokers,
                                  bool unclean_allowed, uint32_t bugs) {
  if (s.leader != kNoBroker) return s;
  return reelect(s, brokers, unclean_allowed, bugs);
}

ElectionOutcome elect_preferred(const PartitionState& s, const BrokerLiveness& brokers) {
  if (s.replicas.empty()) return {ErrorCode::preferred_leader_not_available, s};
  const BrokerId preferred = s.replicas.front();
  if (s.leader == preferred) return {ErrorCode::election_not_needed, s};
  if (!brokers.is_live(preferred) || !s.in_isr(preferred)) return {ErrorCode::preferred_leader_not_available, s};
  return {ErrorCode::none, with_leader(s, preferred)};
}

ElectionOutcome elect_unclean(const PartitionState& s, const BrokerLiveness& brokers) {
  if (s.leader != kNoBroker && brokers.is_live(s.leader)) return {ErrorCode::election_not_needed, s};
  const BrokerId next = choose_leader(s, brokers, true);
  if (next == kNoBroker) return {ErrorCode::eligible_leaders_not_available, s};
  return {ErrorCode::none, with_leader(s, next)};
}

}  // namespace brokerd::replication
