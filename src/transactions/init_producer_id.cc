// InitProducerId with a transactional id (TransactionCoordinator.handleInitProducerId): a new
// id gets a producer id; a known one gets its epoch bumped, which fences the producer that
// held it. An ongoing transaction of that producer is aborted first.
#include "brokerd/transactions/coordinator_rules.h"
#include "brokerd/transactions/states.h"

namespace brokerd::transactions {
namespace {

// KIP-360: a producer re-initialising after an error names the id and epoch it had. It is
// fenced unless the id is brand new (no epoch yet: a producer recovering from
// UNKNOWN_PRODUCER_ID), the producer id is the current one (the epoch is checked next), or it
// is the previous one with an exhausted epoch (a retry of a rotation whose answer was lost).
bool expected_id_valid(const TxnMetadata& md, const ProducerIdAndEpoch& expected) {
  return md.producer_epoch == kNoProducerEpoch || expected.producer_id == md.producer_id ||
         (expected.producer_id == md.previous_producer_id && epoch_exhausted(expected.epoch));
}

TxnValue empty_value(const TxnMetadata& md, ProducerId pid, ProducerEpoch epoch, ProducerEpoch last_epoch,
                     int32_t timeout_ms, int64_t now_ms) {
  TxnValue v;
  v.producer_id = pid;
  v.previous_producer_id = md.producer_id;
  v.next_producer_id = kNoProducerId;
  v.producer_epoch = epoch;
  v.last_producer_epoch = last_epoch;
  v.timeout_ms = timeout_ms;
  v.state = TxnState::empty;
  v.txn_start_ms = -1;
  v.last_update_ms = now_ms;
  v.client_txn_version = kTxnVersion0;
  return v;
}

// The epoch bump of an id with no open transaction (prepareIncrementProducerEpoch).
Decision bump_epoch(const TxnMetadata& md, const InitProducerIdRequest& req, int64_t now_ms) {
  const auto bumped = static_cast<ProducerEpoch>(md.producer_epoch + 1);
  ProducerEpoch epoch = bumped;
  ProducerEpoch last = kNoProducerEpoch;
  if (req.expected) {
    const ProducerEpoch expected = req.expected->epoch;
    if (md.producer_epoch == kNoProducerEpoch || expected == md.producer_epoch) {
      // The producer goes on after an error and nobody else initialised since: remember the
      // epoch it had, so a retry of this very call is recognised below.
      last = md.producer_epoch;
    } else if (expected == md.last_producer_epoch) {
      // A retry of a bump that succeeded: answer the same epoch again.
      epoch = md.producer_epoch;
      last = md.last_producer_epoch;
    } else {
      return Decision::fail(ErrorCode::producer_fenced);
    }
  }
  return Decision::write_then(empty_value(md, md.producer_id, epoch, last, req.timeout_ms, now_ms), AfterWrite::reply);
}

}  // namespace

bool valid_timeout(int32_t timeout_ms, const CoordinatorConfig& config) {
  return timeout_ms > 0 && timeout_ms <= config.max_timeout_ms;
}

Decision init_producer_id(const TxnMetadata* existing, const InitProducerIdRequest& req, int64_t now_ms,
                          const CoordinatorConfig& config, const AllocateProducerId& allocate) {
  // A null transactional id is an idempotent producer, which never reaches the coordinator's
  // rules; an empty one is refused as the producer client refuses it.
  if (req.transactional_id.empty()) return Decision::fail(ErrorCode::invalid_request);
  if (!valid_timeout(req.timeout_ms, config)) return Decision::fail(ErrorCode::invalid_transaction_timeout);

  std::optional<TxnMetadata> created;
  if (!existing) {
    ProducerIdGrant grant = allocate();
    if (grant.error != ErrorCode::none) return Decision::fail(grant.error);
    TxnMetadata md;
    md.transactional_id = req.transactional_id;
    md.producer_id = grant.producer_id;
    md.timeout_ms = req.timeout_ms;
    md.state = TxnState::empty;
    md.last_update_ms = now_ms;
    created = std::move(md);
    existing = &*created;
  }
  const TxnMetadata& md = *existing;

  if (md.transition_in_progress()) return Decision::fail(ErrorCode::concurrent_transactions);
  if (req.expected && !expected_id_valid(md, *req.expected)) return Decision::fail(ErrorCode::producer_fenced);

  Decision d;
  switch (md.state) {
    case TxnState::prepare_commit:
    case TxnState::prepare_abort:
      // The markers are on their way; the client backs off and retries.
      return Decision::fail(ErrorCode::concurrent_transactions);

    case TxnState::empty:
    case TxnState::complete_commit:
    case TxnState::complete_abort:
      if (epoch_exhausted(md.producer_epoch) && (!req.expected || req.expected->epoch == md.producer_epoch)) {
        // No epoch left to fence with: rotate to a new producer id at epoch 0.
        ProducerIdGrant grant = allocate();
        if (grant.error != ErrorCode::none) return Decision::fail(grant.error);
        ProducerEpoch last = req.expected ? md.producer_epoch : kNoProducerEpoch;
        d.write = empty_value(md, grant.producer_id, 0, last, req.timeout_ms, now_ms);
      } else {
        d = bump_epoch(md, req, now_ms);
        if (!d.writes()) return d;
      }
      break;

    case TxnState::ongoing:
      // The previous producer left a transaction open: abort it with the epoch bumped, which
      // fences that producer. The bumped epoch is never handed out; the client is told
      // CONCURRENT_TRANSACTIONS and its retry bumps again (or rotates, if this used the last
      // epoch).
      d.write = fence_and_abort(md, now_ms);
      d.then = AfterWrite::fence_then_retry;
      d.epoch_fence = true;
      break;

    case TxnState::dead:
    case TxnState::prepare_epoch_fence:
      // Dead is only ever pending (caught above), and a fence is written as PrepareAbort: an
      // id found in either state was not left there by these rules.
      return Decision::fail(ErrorCode::unknown_server_error);
  }
  d.created = std::move(created);
  return d;
}

}  // namespace brokerd::transactions
