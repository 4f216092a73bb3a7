#include "brokerd/fetcher/fetch_session.h"

#include <climits>
#include <unordered_set>

namespace brokerd::fetcher {

FollowerFetchSession::Plan FollowerFetchSession::plan(const std::vector<FetchWant>& wanted) const {
  Plan p;
  p.session_id = session_id_;
  p.epoch = next_epoch_;
  if (p.full()) {
    p.send = wanted;
    return p;
  }
  std::unordered_set<partitions::TopicPartition> still;
  still.reserve(wanted.size());
  for (const auto& w : wanted) {
    still.insert(w.tp);
    auto it = partitions_.find(w.tp);
    if (it == partitions_.end() || !(it->second.position == w.position)) p.send.push_back(w);
  }
  for (const auto& [tp, _] : partitions_)
    if (!still.contains(tp)) p.forget.push_back(tp);
  return p;
}

void FollowerFetchSession::answered(const Plan& plan, int32_t session_id) {
  if (plan.full()) {
    partitions_.clear();
    session_id_ = session_id;
    // No session (the leader's cache is full): every request stays a full one.
    next_epoch_ = session_id == 0 ? 0 : 1;
    if (session_id == 0) return;
  } else {
    next_epoch_ = next_epoch_ == INT32_MAX ? 1 : next_epoch_ + 1;
  }
  for (const auto& tp : plan.forget) partitions_.erase(tp);
  for (const auto& w : plan.send) partitions_[w.tp].position = w.position;
}

void FollowerFetchSession::answered_partition(const partitions::TopicPartition& tp, int64_t high_watermark,
                                              int64_t log_start_offset) {
  if (auto it = partitions_.find(tp); it != partitions_.end()) it->second.answer = LastAnswer{high_watermark, log_start_offset};
}

void FollowerFetchSession::failed(protocol::ErrorCode error) {
  // The session the leader no longer knows is not named again; any other is closed by the
  // full request that names it.
  if (error == protocol::ErrorCode::fetch_session_id_not_found) session_id_ = 0;
  next_epoch_ = 0;
  partitions_.clear();
}

std::optional<FollowerFetchSession::LastAnswer> FollowerFetchSession::last_answer(const partitions::TopicPartition& tp) const {
  auto it = partitions_.find(tp);
  if (it == partitions_.end()) return std::nullopt;
  return it->second.answer;
}

}  // namespace brokerd::fetcher
