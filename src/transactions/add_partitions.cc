// AddPartitionsToTxn, AddOffsetsToTxn and the verify-only check of KIP-890 part 1
// (TransactionCoordinator.handleAddPartitionsToTransaction and
// handleVerifyPartitionsInTransaction).
#include <algorithm>

#include "brokerd/transactions/coordinator_rules.h"
#include "brokerd/transactions/states.h"

namespace brokerd::transactions {
namespace {

inline constexpr std::string_view kOffsetsTopic = "__consumer_offsets";

// The checks both the add and the verification make of the producer's id and epoch.
ErrorCode check_producer(const TxnMetadata* md, ProducerId pid, ProducerEpoch epoch) {
  if (!md) return ErrorCode::invalid_producer_id_mapping;
  if (md->producer_id != pid) return ErrorCode::invalid_producer_id_mapping;
  if (md->producer_epoch != epoch) return ErrorCode::producer_fenced;
  // An id whose first InitProducerId was never written has handed out no epoch yet.
  if (md->producer_epoch == kNoProducerEpoch) return ErrorCode::invalid_producer_id_mapping;
  return ErrorCode::none;
}

bool all_in(const TxnMetadata& md, const std::vector<TopicPartition>& partitions) {
  return std::all_of(partitions.begin(), partitions.end(),
                     [&](const TopicPartition& tp) { return md.partitions.contains(tp); });
}

}  // namespace

Decision add_partitions(const TxnMetadata* md, const AddPartitionsRequest& req, int64_t now_ms) {
  if (req.transactional_id.empty()) return Decision::fail(ErrorCode::invalid_request);
  if (ErrorCode e = check_producer(md, req.producer_id, req.producer_epoch); e != ErrorCode::none)
    return Decision::fail(e);
  // The client backs off and retries while a transition is written or markers are sent.
  if (md->transition_in_progress() || is_prepare(md->state)) return Decision::fail(ErrorCode::concurrent_transactions);
  // Nothing new: answer at once without a write.
  if (md->state == TxnState::ongoing && all_in(*md, req.partitions))
    return Decision::answer({md->producer_id, md->producer_epoch});
  if (md->state != TxnState::ongoing && !can_transition(md->state, TxnState::ongoing))
    return Decision::fail(ErrorCode::invalid_txn_state);

  TxnValue v = md->value();
  v.state = TxnState::ongoing;
  v.partitions.insert(req.partitions.begin(), req.partitions.end());
  // The first partition starts the transaction, and its timeout clock.
  if (md->state != TxnState::ongoing) v.txn_start_ms = now_ms;
  v.previous_producer_id = md->producer_id;
  v.next_producer_id = kNoProducerId;
  v.last_update_ms = now_ms;
  v.client_txn_version = req.client_txn_version;
  return Decision::write_then(std::move(v), AfterWrite::reply);
}

Decision add_offsets(const TxnMetadata* md, const std::string& transactional_id, ProducerId producer_id,
                     ProducerEpoch producer_epoch, int32_t offsets_partition, int64_t now_ms,
                     int16_t client_txn_version) {
  AddPartitionsRequest req{
      .transactional_id = transactional_id,
      .producer_id = producer_id,
      .producer_epoch = producer_epoch,
      .partitions = {TopicPartition{std::string(kOffsetsTopic), offsets_partition}},
      .client_txn_version = client_txn_version,
  };
  return add_partitions(md, req, now_ms);
}

std::vector<std::pair<TopicPartition, ErrorCode>> verify_partitions(const TxnMetadata* md,
                                                                    const AddPartitionsRequest& req) {
  auto all = [&](ErrorCode e) {
    std::vector<std::pair<TopicPartition, ErrorCode>> out;
    for (const auto& tp : req.partitions) out.emplace_back(tp, e);
    return out;
  };
  if (req.transactional_id.empty()) return all(ErrorCode::invalid_request);
  if (ErrorCode e = check_producer(md, req.producer_id, req.producer_epoch); e != ErrorCode::none) return all(e);
  // No check of a pending transition: the append is checked again when it is written, and a
  // partition joins the set only once its addition is in the log.
  if (is_prepare(md->state)) return all(ErrorCode::concurrent_transactions);
  std::vector<std::pair<TopicPartition, ErrorCode>> out;
  for (const auto& tp : req.partitions)
    out.emplace_back(tp, md->partitions.contains(tp) ? ErrorCode::none : ErrorCode::transaction_abortable);
  return out;
}

}  // namespace brokerd::transactions
