// Fetch on the follower: follow leader changes, truncate on divergence, switch to a snapshot,
// or append the entries and advance the high watermark.
#include <algorithm>

#include "brokerd/raft/node.h"

namespace brokerd::raft {

void RaftNode::handle_fetch_response(const Message& m, const FetchResponse& r, int64_t now) {
  if (m.correlation_id != inflight_ || inflight_ == 0) return;  // late or duplicated
  inflight_ = 0;
  next_fetch_at_ = now + config_.fetch_backoff_ms;
  if (r.error != Errc::none) {
    if (observe_epoch(r.leader_epoch, r.leader_id, now)) return;
    if (r.error == Errc::not_leader_or_follower && role_ == Role::follower &&
        r.leader_epoch == epoch_ && m.from == leader_id_) {
      // Our leader has resigned.
      if (is_voter()) {
        become_prospective(now);
      } else {
        become_unattached(epoch_, now);
      }
    }
    return;
  }
  if (role_ != Role::follower || m.from != leader_id_ || r.leader_epoch != epoch_) {
    // An observer's discovery fetch reached the leader: follow it from the next fetch on.
    observe_epoch(r.leader_epoch, m.from, now);
    return;
  }
  heard_from_leader(now);

  if (r.diverging_epoch) {
    // Cut our log back to where it last agreed with the leader's, then fetch again.
    const OffsetAndEpoch local = log_.end_offset_for_epoch(r.diverging_epoch->epoch);
    Offset cut = std::min(r.diverging_epoch->offset, local.offset);
    if (local.epoch == kNoEpoch) cut = log_.start_offset();
    log_.truncate_to(std::max(cut, log_.start_offset()));
    request_flush();
    next_fetch_at_ = now;
    follower_tick(now);
    return;
  }
  if (r.snapshot_id) {
    snapshot_fetch_ = SnapshotFetch{*r.snapshot_id, {}};
    next_fetch_at_ = now;
    follower_tick(now);
    return;
  }
  std::vector<Entry> fresh;
  for (const auto& e : r.entries) {
    if (e.offset == log_.end_offset() + static_cast<Offset>(fresh.size())) fresh.push_back(e);
  }
  if (!fresh.empty()) {
    log_.append(fresh);
    request_flush();
    next_fetch_at_ = now;
  }
  set_high_watermark(std::min(r.high_watermark, log_.end_offset()));
  if (log_.end_offset() >= r.high_watermark) confirmed_at_ = fetch_sent_at_;
  follower_tick(now);
}

}  // namespace brokerd::raft
