// What the coordinator does on its own: abort transactions older than their timeout
// (abortTimedOutTransactions), expire idle transactional ids (transactional.id.expiration.ms),
// and finish, after loading a partition of the log, what its predecessor had prepared.
#include "brokerd/transactions/coordinator_rules.h"
#include "brokerd/transactions/states.h"

namespace brokerd::transactions {

bool timed_out(const TxnMetadata& md, int64_t now_ms) {
  return !md.transition_in_progress() && md.state == TxnState::ongoing && md.txn_start_ms + md.timeout_ms < now_ms;
}

std::vector<ProducerIdAndEpoch> timed_out_transactions(const std::map<std::string, TxnMetadata>& cache, int64_t now_ms) {
  std::vector<ProducerIdAndEpoch> out;
  for (const auto& [id, md] : cache)
    if (timed_out(md, now_ms)) out.push_back({md.producer_id, md.producer_epoch});
  return out;
}

Decision abort_timed_out(const TxnMetadata& md, ProducerId expected, int64_t now_ms) {
  // The id has a new producer since the time-out was noticed, or something else is being
  // written: leave it (a later pass looks again).
  if (md.producer_id != expected) return Decision::fail(ErrorCode::invalid_producer_id_mapping);
  if (md.transition_in_progress()) return Decision::fail(ErrorCode::concurrent_transactions);
  if (md.state != TxnState::ongoing) return Decision::fail(ErrorCode::invalid_txn_state);
  // The producer of a timed-out transaction is fenced: its next request learns the
  // transaction is gone instead of adding to a transaction that no longer exists.
  Decision d = Decision::write_then(fence_and_abort(md, now_ms), AfterWrite::send_markers);
  d.epoch_fence = true;
  return d;
}

bool should_expire(const TxnMetadata& md, int64_t now_ms, const CoordinatorConfig& config) {
  return !md.transition_in_progress() && expiration_allowed(md.state) &&
         md.last_update_ms <= now_ms - config.transactional_id_expiration_ms;
}

std::optional<TxnValue> expire(const TxnMetadata& md, int64_t now_ms, const CoordinatorConfig& config) {
  if (!should_expire(md, now_ms, config)) return std::nullopt;
  // Kafka's Dead keeps the id's fields and time: it is never written, only its tombstone.
  TxnValue v = md.value();
  v.state = TxnState::dead;
  v.partitions.clear();
  return v;
}

std::map<std::string, TxnMetadata> replay_txn_log(std::span<const TxnLogRecord> records) {
  std::map<std::string, TxnMetadata> loaded;
  for (const auto& r : records) {
    auto id = decode_txn_key(r.key);
    if (!id) continue;  // another coordinator's record, or one from an aborted upgrade
    if (!r.value) {
      loaded.erase(*id);
      continue;
    }
    TxnMetadata md = decode_txn_value(*id, *r.value);
    loaded.insert_or_assign(*id, std::move(md));
  }
  return loaded;
}

std::vector<MarkerPlan> resume_after_load(const std::map<std::string, TxnMetadata>& loaded, int64_t now_ms) {
  std::vector<MarkerPlan> plans;
  for (const auto& [id, md] : loaded) {
    if (!is_prepare(md.state)) continue;
    // Some or all markers may have been written before the old coordinator stopped; which
    // ones is not in the log, so all are sent again (as Kafka does): a partition whose
    // transaction a marker already closed finds nothing open for the repeat.
    auto d = markers_after_prepare(md, md.value(), now_ms);
    if (d.plan) plans.push_back(std::move(*d.plan));
  }
  return plans;
}

}  // namespace brokerd::transactions
