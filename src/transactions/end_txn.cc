// EndTxn (TransactionCoordinator.endTransaction): an ongoing transaction is prepared to commit
// or abort; once that is written the markers go to its partitions, and once they are written
// the transaction completes. A retry of an EndTxn whose outcome is already prepared or
// complete gets the same answer again. With transaction version 2 every end bumps the epoch.
#include "brokerd/transactions/coordinator_rules.h"
#include "brokerd/transactions/states.h"

namespace brokerd::transactions {
namespace {

TxnState prepare_state(TxnResult r) {
  return r == TxnResult::commit ? TxnState::prepare_commit : TxnState::prepare_abort;
}

bool matches(TxnState s, TxnResult r) {
  if (r == TxnResult::commit) return s == TxnState::prepare_commit || s == TxnState::complete_commit;
  return s == TxnState::prepare_abort || s == TxnState::complete_abort;
}

// Version 2: the request names the epoch before this end's bump, which the metadata holds.
bool epoch_bumped_by_end(const TxnMetadata& md, ProducerEpoch requested) {
  return supports_epoch_bump(md.client_txn_version) && md.producer_epoch == requested + 1;
}

// Version 2: the end used the last epoch and the transaction moved to a new producer id at
// epoch 0; the retry still names the old id and its last usable epoch.
bool retry_after_overflow(const TxnMetadata& md, const EndTxnRequest& req) {
  return supports_epoch_bump(md.client_txn_version) && md.previous_producer_id == req.producer_id &&
         req.producer_epoch == kMaxProducerEpoch - 1 && md.producer_epoch == 0;
}

bool epoch_valid(const TxnMetadata& md, const EndTxnRequest& req) {
  if (!supports_epoch_bump(md.client_txn_version)) return req.producer_epoch == md.producer_epoch;
  // With version 2 the same epoch in a prepared or completed state is the next transaction's
  // end, not a retry; a retry names the epoch one below the metadata's.
  switch (md.state) {
    case TxnState::prepare_commit:
    case TxnState::prepare_abort:
      return epoch_bumped_by_end(md, req.producer_epoch);
    case TxnState::complete_commit:
    case TxnState::complete_abort:
      return epoch_bumped_by_end(md, req.producer_epoch) || retry_after_overflow(md, req);
    default:
      return req.producer_epoch == md.producer_epoch;
  }
}

}  // namespace

Decision end_txn(const TxnMetadata* md, const EndTxnRequest& req, int64_t now_ms, const AllocateProducerId& allocate) {
  if (req.transactional_id.empty()) return Decision::fail(ErrorCode::invalid_request);
  if (!md) return Decision::fail(ErrorCode::invalid_producer_id_mapping);
  if (md->producer_id != req.producer_id && !retry_after_overflow(*md, req))
    return Decision::fail(ErrorCode::invalid_producer_id_mapping);
  if (!epoch_valid(*md, req)) return Decision::fail(ErrorCode::producer_fenced);
  if (md->transition_in_progress()) return Decision::fail(ErrorCode::concurrent_transactions);

  switch (md->state) {
    case TxnState::ongoing: {
      TxnValue v = md->value();
      v.state = prepare_state(req.result);
      v.previous_producer_id = md->producer_id;
      v.next_producer_id = kNoProducerId;
      v.last_update_ms = now_ms;
      v.client_txn_version = req.client_txn_version;
      if (supports_epoch_bump(req.client_txn_version)) {
        // Short.MaxValue is only ever a fence's epoch, never handed to a producer; and there is
        // nothing to bump it to.
        if (md->producer_epoch == kMaxProducerEpoch) return Decision::fail(ErrorCode::producer_fenced);
        // The bump fences this transaction's epoch: late batches of it are refused. The last
        // usable epoch is still bumped into (Short.MaxValue), and the id rotates on completion.
        if (epoch_exhausted(md->producer_epoch)) {
          ProducerIdGrant grant = allocate();
          if (grant.error != ErrorCode::none) return Decision::fail(grant.error);
          v.next_producer_id = grant.producer_id;
        }
        v.last_producer_epoch = md->producer_epoch;
        v.producer_epoch = static_cast<ProducerEpoch>(md->producer_epoch + 1);
      }
      return Decision::write_then(std::move(v), AfterWrite::send_markers);
    }
    case TxnState::complete_commit:
    case TxnState::complete_abort:
      // Already done: a retry gets the outcome again, with the id and epoch the producer has.
      if (matches(md->state, req.result)) return Decision::answer({md->producer_id, md->producer_epoch});
      return Decision::fail(ErrorCode::invalid_txn_state);
    case TxnState::prepare_commit:
    case TxnState::prepare_abort:
      // The same outcome is on its way: retry later. The other one is too late.
      if (matches(md->state, req.result)) return Decision::fail(ErrorCode::concurrent_transactions);
      return Decision::fail(ErrorCode::invalid_txn_state);
    case TxnState::empty:
      return Decision::fail(ErrorCode::invalid_txn_state);
    case TxnState::dead:
    case TxnState::prepare_epoch_fence:
      return Decision::fail(ErrorCode::unknown_server_error);
  }
  return Decision::fail(ErrorCode::unknown_server_error);
}

TxnValue prepare_complete(const TxnMetadata& md, int64_t now_ms) {
  TxnValue v = md.value();
  v.state = md.state == TxnState::prepare_commit ? TxnState::complete_commit : TxnState::complete_abort;
  v.previous_producer_id = md.producer_id;
  if (supports_epoch_bump(md.client_txn_version) && md.next_producer_id != kNoProducerId) {
    v.producer_id = md.next_producer_id;
    v.producer_epoch = 0;
  }
  v.next_producer_id = kNoProducerId;
  v.last_producer_epoch = md.producer_epoch;
  v.partitions.clear();
  v.last_update_ms = now_ms;
  return v;
}

MarkerDecision markers_after_prepare(const TxnMetadata& md, const TxnValue& written, int64_t now_ms) {
  // Between the write and now the id may have moved on (a fence, a new coordinator epoch).
  if (md.producer_id != written.producer_id) return {ErrorCode::invalid_producer_id_mapping, std::nullopt};
  if (md.producer_epoch != written.producer_epoch) return {ErrorCode::producer_fenced, std::nullopt};
  if (md.transition_in_progress()) return {ErrorCode::concurrent_transactions, std::nullopt};
  if (!is_prepare(md.state) || md.state != written.state) return {ErrorCode::invalid_txn_state, std::nullopt};

  MarkerPlan plan;
  plan.transactional_id = md.transactional_id;
  plan.result = md.state == TxnState::prepare_commit ? TxnResult::commit : TxnResult::abort;
  // The markers carry the epoch of the prepare: with version 2 the bumped one, which is what
  // fences the ended transaction's late batches.
  plan.producer_id = md.producer_id;
  plan.producer_epoch = md.producer_epoch;
  plan.partitions.assign(md.partitions.begin(), md.partitions.end());
  plan.complete = prepare_complete(md, now_ms);
  plan.reply = {plan.complete.producer_id, plan.complete.producer_epoch};
  return {ErrorCode::none, std::move(plan)};
}

TxnValue fence_and_abort(const TxnMetadata& md, int64_t now_ms) {
  TxnValue v = md.value();
  v.state = TxnState::prepare_abort;
  // A fence whose write failed was never answered with: its epoch is reused, not bumped again.
  if (!md.failed_epoch_fence && md.producer_epoch < kMaxProducerEpoch)
    v.producer_epoch = static_cast<ProducerEpoch>(md.producer_epoch + 1);
  v.last_producer_epoch = kNoProducerEpoch;
  v.previous_producer_id = md.producer_id;
  v.next_producer_id = kNoProducerId;
  v.last_update_ms = now_ms;
  // The coordinator ends this transaction, not its client: version 0 keeps the fenced
  // producer's EndTxn from passing for a version 2 retry of an end it never made.
  v.client_txn_version = kTxnVersion0;
  return v;
}

ErrorCode fenced_error_for(ErrorCode e, bool client_knows_producer_fenced) {
  if (e == ErrorCode::producer_fenced && !client_knows_producer_fenced) return ErrorCode::invalid_producer_epoch;
  return e;
}

}  // namespace brokerd::transactions
