// Beginning and completing a transition: the checks Kafka makes before the in-memory metadata
// takes a value that was written to the log (TransactionMetadata.completeTransitionTo).
#include <algorithm>

#include "brokerd/transactions/coordinator_rules.h"
#include "brokerd/transactions/states.h"

namespace brokerd::transactions {
namespace {

// The producer id and epoch may stay, the epoch may grow by one (a bump), or the id may change
// with the epoch back at 0 (a rotation, or version 2's move to next_producer_id).
bool producer_follows(const TxnMetadata& md, const TxnValue& next) {
  if (next.producer_id < 0) return false;
  if (next.producer_id == md.producer_id)
    return next.producer_epoch == md.producer_epoch || next.producer_epoch == md.producer_epoch + 1;
  return next.producer_epoch == 0;
}

bool partitions_grow(const TxnMetadata& md, const TxnValue& next) {
  return std::includes(next.partitions.begin(), next.partitions.end(), md.partitions.begin(), md.partitions.end());
}

bool fits(const TxnMetadata& md, const TxnValue& next) {
  if (!md.pending_state || *md.pending_state != next.state) return false;
  if (!can_transition(md.state, next.state)) return false;
  if (next.last_update_ms < md.last_update_ms) return false;
  if (next.state == TxnState::dead) return true;  // the id leaves: nothing else matters
  if (!producer_follows(md, next) || next.producer_epoch < 0) return false;
  switch (next.state) {
    case TxnState::empty:  // InitProducerId
      return next.partitions.empty() && next.txn_start_ms == -1;
    case TxnState::ongoing:  // AddPartitionsToTxn
      return next.producer_id == md.producer_id && next.producer_epoch == md.producer_epoch &&
             partitions_grow(md, next) && next.timeout_ms == md.timeout_ms && next.txn_start_ms >= 0;
    case TxnState::prepare_commit:
    case TxnState::prepare_abort:  // EndTxn, a fence or a time-out
      return next.producer_id == md.producer_id && next.partitions == md.partitions &&
             next.timeout_ms == md.timeout_ms && next.txn_start_ms == md.txn_start_ms;
    case TxnState::complete_commit:
    case TxnState::complete_abort:  // the markers are written
      if (next.producer_id != md.producer_id && next.producer_id != md.next_producer_id) return false;
      return next.partitions.empty() && next.timeout_ms == md.timeout_ms && next.txn_start_ms != -1;
    case TxnState::dead:
    case TxnState::prepare_epoch_fence:
      // Never written: a fence is written as the PrepareAbort it leads to.
      return false;
  }
  return false;
}

}  // namespace

void begin_transition(TxnMetadata& md, const TxnValue& next) { md.pending_state = next.state; }

bool complete_transition(TxnMetadata& md, const TxnValue& next) {
  if (!fits(md, next)) return false;
  static_cast<TxnValue&>(md) = next;
  md.pending_state.reset();
  // A completed transaction had its fence (if any) written.
  if (is_complete(next.state)) md.failed_epoch_fence = false;
  return true;
}

void abandon_transition(TxnMetadata& md, const TxnValue& attempted, bool epoch_fence) {
  md.pending_state.reset();
  if (!epoch_fence) return;
  md.producer_epoch = attempted.producer_epoch;
  md.last_producer_epoch = kNoProducerEpoch;
  md.failed_epoch_fence = true;
}

}  // namespace brokerd::transactions
