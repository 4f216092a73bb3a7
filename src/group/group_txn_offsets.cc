// Offsets sent to a transaction (TxnOffsetCommit, KIP-98/447): written to the offsets
// partition as the producer's transactional batch, held pending per producer id, made the
// group's committed offsets by the transaction's COMMIT marker on this partition and dropped
// by its ABORT. While pending, a fetch that asks for stable offsets gets
// UNSTABLE_OFFSET_COMMIT for those partitions.
#include "brokerd/common/logger.h"
#include "group/group_internal.h"

namespace brokerd::group {

void GroupPartition::supersede_pending(Group& g, const OffsetKey& key) {
  for (auto& [pid, pending] : g.txn_offsets)
    if (auto it = pending.find(key); it != pending.end()) it->second.superseded = true;
}

std::vector<ErrorCode> GroupPartition::txn_commit(const TxnCommitRequest& req) {
  std::vector<ErrorCode> out(req.offsets.size(), ErrorCode::none);
  ErrorCode group_error = ErrorCode::none;
  if (!loaded_) {
    group_error = not_ready();
  } else if (req.group_id.empty()) {
    group_error = ErrorCode::invalid_group_id;
  } else if (!txn_append_) {
    group_error = ErrorCode::coordinator_not_available;
  } else if (const Group* g = find(req.group_id); g && (req.generation >= 0 || !req.member_id.empty())) {
    // v3+ names the member and generation (KIP-447): a zombie of an older generation is fenced.
    group_error = commit_error(g, req);
  } else if (!g && req.generation >= 0) {
    group_error = ErrorCode::illegal_generation;
  }
  if (group_error != ErrorCode::none) {
    std::fill(out.begin(), out.end(), group_error);
    return out;
  }
  auto [records, accepted] = commit_records(req, out);
  if (records.empty()) return out;
  ErrorCode e = append_error_to_group_error(txn_append_(std::move(records), req.producer_id, req.producer_epoch));
  if (e != ErrorCode::none) {
    for (auto& x : out)
      if (x == ErrorCode::none) x = e;
    return out;
  }
  GroupPtr g = get_or_create(req.group_id);
  auto& pending = g->txn_offsets[req.producer_id];
  for (auto& [key, entry] : accepted) pending[key] = PendingTxnOffset{std::move(entry), false};
  txn_groups_[req.producer_id].insert(req.group_id);
  return out;
}

void GroupPartition::complete_txn(int64_t producer_id, bool commit) {
  auto it = txn_groups_.find(producer_id);
  if (it == txn_groups_.end()) return;
  size_t installed = 0;
  for (const auto& id : it->second) {
    auto g = groups_.find(id);
    if (g == groups_.end()) continue;
    auto pending = g->second->txn_offsets.find(producer_id);
    if (pending == g->second->txn_offsets.end()) continue;
    if (commit) {
      for (auto& [key, p] : pending->second) {
        if (p.superseded) continue;
        g->second->offsets[key] = std::move(p.entry);
        ++installed;
      }
    }
    g->second->txn_offsets.erase(pending);
  }
  txn_groups_.erase(it);
  module_logger("group")->debug("{}-{}: transaction of producer {} {}: {} offsets installed", kOffsetsTopic,
                                partition_, producer_id, commit ? "committed" : "aborted", installed);
}

size_t GroupPartition::pending_txn_offsets() const {
  size_t n = 0;
  for (const auto& [_, g] : groups_)
    for (const auto& [pid, pending] : g->txn_offsets) n += pending.size();
  return n;
}

bool GroupPartition::replay_txn(std::span<const std::byte> key, std::optional<std::span<const std::byte>> value,
                                int64_t producer_id, std::string* why) {
  std::optional<RecordKey> k;
  try {
    k = decode_key(key);
  } catch (const std::exception& e) {
    if (why) *why = std::string("unreadable key: ") + e.what();
    return false;
  }
  auto* ok = k ? std::get_if<OffsetRecordKey>(&*k) : nullptr;
  if (!ok || !value) {
    // Transactions hold offset commits only.
    if (why) *why = "not an offset commit";
    return false;
  }
  try {
    loading_txn_[producer_id][ok->group_id][ok->key] = PendingTxnOffset{decode_offset_value(*value), false};
  } catch (const std::exception& e) {
    if (why) *why = std::string("unreadable value: ") + e.what();
    return false;
  }
  return true;
}

void GroupPartition::replay_marker(int64_t producer_id, bool commit) {
  auto it = loading_txn_.find(producer_id);
  if (it == loading_txn_.end()) return;
  if (commit) {
    for (auto& [group_id, pending] : it->second) {
      auto& offsets = loading_offsets_[group_id];
      for (auto& [key, p] : pending)
        if (!p.superseded) offsets[key] = std::move(p.entry);
    }
  }
  loading_txn_.erase(it);
}

}  // namespace brokerd::group
