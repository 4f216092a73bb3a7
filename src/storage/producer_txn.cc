// The transaction rules of the producer state: which data batches may open or continue a
// transaction, the checks and effects of a transaction marker, the ongoing transactions
// that hold the last stable offset back, and the verification guards of KIP-890.
#include <fmt/format.h>

#include "brokerd/storage/producer_state.h"

namespace brokerd::storage {

using protocol::ErrorCode;

ErrorCode ProducerAppend::check_txn(const ProducerEntry* cur, const ProducerBatchHeader& h, std::string* message) const {
  if (!h.transactional) {
    if (cur && cur->in_transaction()) {
      *message = fmt::format("Expected transactional write from producer {} with an ongoing transaction at offset {}",
                             h.producer_id, cur->current_txn_first_offset);
      return ErrorCode::invalid_txn_state;
    }
    return ErrorCode::none;
  }
  const bool continues = cur && cur->in_transaction() && cur->epoch == h.epoch;
  if (continues && mode_.kind != TxnAppendMode::Kind::not_allowed) return ErrorCode::none;
  bool allowed = false;
  switch (mode_.kind) {
    case TxnAppendMode::Kind::not_allowed:
      break;
    case TxnAppendMode::Kind::unverified:
      allowed = true;
      break;
    case TxnAppendMode::Kind::guarded: {
      const VerificationEntry* v = state_.verification(h.producer_id);
      allowed = v && mode_.guard != 0 && v->guard == mode_.guard;
      break;
    }
  }
  if (allowed) return ErrorCode::none;
  *message = "Record was not part of an ongoing transaction";
  return ErrorCode::invalid_txn_state;
}

ErrorCode ProducerStateManager::check_marker(int64_t pid, int16_t epoch, int32_t coordinator_epoch,
                                             std::string* message) const {
  const ProducerEntry* cur = find(pid);
  if (!cur) return ErrorCode::none;
  if (cur->epoch != kNoProducerEpoch && epoch < cur->epoch) {
    *message = fmt::format("marker for producer {} at epoch {} is older than the current epoch {}", pid, epoch,
                           cur->epoch);
    return ErrorCode::producer_fenced;
  }
  if (coordinator_epoch < cur->coordinator_epoch) {
    *message = fmt::format("marker for producer {} from coordinator epoch {}, below the last marker's {}", pid,
                           coordinator_epoch, cur->coordinator_epoch);
    return ErrorCode::transaction_coordinator_fenced;
  }
  return ErrorCode::none;
}

std::optional<CompletedTxn> ProducerStateManager::apply_marker(int64_t pid, int16_t epoch, int32_t coordinator_epoch,
                                                               ControlType type, int64_t offset, int64_t timestamp) {
  ProducerEntry e;
  if (const ProducerEntry* cur = find(pid)) e = *cur;
  e.producer_id = pid;
  if (e.epoch != epoch) {
    e.batches.clear();  // sequences restart with the new epoch
    e.epoch = epoch;
  }
  std::optional<CompletedTxn> done;
  if (e.in_transaction()) done = CompletedTxn{pid, e.current_txn_first_offset, offset, type == ControlType::abort};
  e.current_txn_first_offset = -1;
  e.coordinator_epoch = coordinator_epoch;
  e.last_timestamp = timestamp;
  put(std::move(e));
  verifications_.erase(pid);
  return done;
}

std::optional<int64_t> ProducerStateManager::first_unstable_offset() const {
  if (ongoing_.empty()) return std::nullopt;
  return ongoing_.begin()->first;
}

int64_t ProducerStateManager::last_stable_offset_after(const CompletedTxn& txn) const {
  for (const auto& [first, pid] : ongoing_)
    if (pid != txn.producer_id) return first;
  return txn.last_offset + 1;
}

uint64_t ProducerStateManager::start_verification(int64_t pid, int16_t epoch, int32_t base_sequence) {
  auto [it, fresh] = verifications_.try_emplace(pid);
  VerificationEntry& v = it->second;
  if (fresh || epoch > v.epoch) {
    if (fresh) v.guard = next_guard_++;
    v.epoch = epoch;
    v.lowest_sequence = base_sequence;
  } else if (epoch == v.epoch && (v.lowest_sequence < 0 || base_sequence < v.lowest_sequence)) {
    v.lowest_sequence = base_sequence;
  }
  return v.guard;
}

const VerificationEntry* ProducerStateManager::verification(int64_t pid) const {
  auto it = verifications_.find(pid);
  return it == verifications_.end() ? nullptr : &it->second;
}

}  // namespace brokerd::storage
