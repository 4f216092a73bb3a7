#pragma once
// The controller's record of one partition and the rules that change it: who leads, who is in
// sync, who may lead next. Pure functions, shared by the controller and the simulator.
//
// Elections follow KIP-966: the high watermark only advances while the ISR has at least
// min.insync.replicas members, and members that leave an ISR already below that size become
// eligible leader replicas (ELR): they hold everything committed, so when the ISR has no live
// member one of them may lead without losing an acknowledged record. A broker that restarts
// after an unclean stop (it may have lost unflushed data) leaves both sets.
#include <optional>
#include <utility>
#include <vector>

#include "brokerd/protocol/error_code.h"
#include "brokerd/replication/types.h"

namespace brokerd::replication {

using protocol::ErrorCode;

struct PartitionState {
  BrokerId leader = kNoBroker;
  Epoch leader_epoch = 0;
  Epoch partition_epoch = 0;  // bumped by every change, the version AlterPartition names
  std::vector<BrokerId> replicas;
  std::vector<BrokerId> isr;
  std::vector<BrokerId> elr;  // eligible leader replicas (KIP-966)
  bool operator==(const PartitionState&) const = default;

  bool in_isr(BrokerId b) const;
  bool in_elr(BrokerId b) const;
  bool is_replica(BrokerId b) const;
};

// What a leader asks the controller for: this ISR, based on the version it knows.
struct AlterPartitionRequest {
  BrokerId leader = kNoBroker;
  Epoch leader_epoch = 0;
  Epoch partition_epoch = 0;
  std::vector<BrokerId> new_isr;
  // KIP-903: the broker epoch each new_isr member fetched with when the leader found it in
  // sync (kNoBrokerEpoch: not known, not checked). A member restarted since (a new epoch,
  // maybe without what it had) is refused.
  std::vector<int64_t> broker_epochs;
  bool operator==(const AlterPartitionRequest&) const = default;
};

struct AlterPartitionResult {
  ErrorCode error = ErrorCode::none;
  PartitionState state;  // the state after the change (or the current one on error)
};

// Which replicas the controller may still count on.
struct BrokerLiveness {
  std::vector<BrokerId> live;  // registered and unfenced
  std::vector<std::pair<BrokerId, int64_t>> epochs;  // each registered broker's epoch, where known
  bool is_live(BrokerId b) const;
  int64_t epoch_of(BrokerId b) const;  // kNoBrokerEpoch if not known
};

// Picks a leader: the first live ISR member in replica order, else the first live ELR
// member, else (only with unclean election allowed) the first live replica.
BrokerId choose_leader(const PartitionState& s, const BrokerLiveness& brokers, bool unclean_allowed,
                       uint32_t bugs = 0);

// Applies an election result: a new leader bumps the leader epoch; an ELR member that leads
// becomes the ISR.
PartitionState with_leader(const PartitionState& s, BrokerId leader);

// Validates and applies a leader's AlterPartition (Kafka's checks: the sender leads in the
// current leader epoch, it names the current partition epoch, every new member is a live
// replica, the leader stays in, and no member is added unless the leader says it caught up).
AlterPartitionResult apply_alter_partition(const PartitionState& s, const AlterPartitionRequest& r,
                                           const BrokerLiveness& brokers, int32_t min_isr);

// A broker was fenced (missed heartbeats or stopped): it leaves the ISR (kept if it is the
// last member, as Kafka keeps it); a leader is replaced.
PartitionState on_broker_fenced(const PartitionState& s, BrokerId broker, const BrokerLiveness& brokers,
                                int32_t min_isr, bool unclean_allowed, uint32_t bugs = 0);

// A broker registered again after an unclean stop: it may have lost unflushed data, so it
// leaves the ISR and the ELR, even as the last ISR member, unless no other replica is
// eligible at all (then it is all there is).
PartitionState on_broker_unclean_restart(const PartitionState& s, BrokerId broker,
                                         const BrokerLiveness& brokers, int32_t min_isr,
                                         bool unclean_allowed, uint32_t bugs = 0);

// A broker came back (unfenced): an offline partition may get a leader.
PartitionState on_broker_unfenced(const PartitionState& s, const BrokerLiveness& brokers,
                                  bool unclean_allowed, uint32_t bugs = 0);

// An election an operator asks for (ElectLeaders), and its outcome: the new state, or why
// there is none (ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE,
// ELIGIBLE_LEADERS_NOT_AVAILABLE) with the state unchanged.
struct ElectionOutcome {
  ErrorCode error = ErrorCode::none;
  PartitionState next;
};
// Preferred: the first replica takes the lead back when it is live and in the ISR.
ElectionOutcome elect_preferred(const PartitionState& s, const BrokerLiveness& brokers);
// Unclean: a partition without a live leader gets one, from the ISR, else the ELR, else any
// live replica (the request allows it, whatever the topic says).
ElectionOutcome elect_unclean(const PartitionState& s, const BrokerLiveness& brokers);

}  // namespace brokerd::replication
