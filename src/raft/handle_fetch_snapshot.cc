// FetchSnapshot: the leader serves its latest snapshot in chunks; a follower whose fetch
// offset lies below the leader's log start installs it and resumes fetching after it.
#include "brokerd/raft/node.h"

namespace brokerd::raft {

void RaftNode::handle_fetch_snapshot_request(const Message& m, const FetchSnapshotRequest& r,
                                             int64_t now) {
  FetchSnapshotResponse resp;
  resp.leader_id = known_leader();
  resp.leader_epoch = epoch_;
  resp.snapshot_id = r.snapshot_id;
  if (role_ != Role::leader) {
    resp.error = Errc::not_leader_or_follower;
    reply(m, std::move(resp));
    return;
  }
  if (r.current_leader_epoch != epoch_) {
    resp.error = r.current_leader_epoch < epoch_ ? Errc::fenced_leader_epoch
                                                 : Errc::unknown_leader_epoch;
    reply(m, std::move(resp));
    return;
  }
  auto snap = snapshots_.latest();
  if (!snap || !(snap->id == r.snapshot_id)) {
    resp.error = Errc::snapshot_not_found;
    reply(m, std::move(resp));
    return;
  }
  const auto size = static_cast<int64_t>(snap->data.size());
  if (r.position < 0 || r.position > size) {
    resp.error = Errc::position_out_of_range;
    reply(m, std::move(resp));
    return;
  }
  Progress& p = progress_[m.from];
  p.last_fetch = now;  // a replica loading a snapshot is alive
  p.acknowledged = true;
  resp.size = size;
  resp.position = r.position;
  resp.bytes = snap->data.substr(static_cast<size_t>(r.position),
                                 static_cast<size_t>(std::max<int32_t>(r.max_bytes, 1)));
  reply(m, std::move(resp));
}

void RaftNode::handle_fetch_snapshot_response(const Message& m, const FetchSnapshotResponse& r,
                                              int64_t now) {
  if (m.correlation_id != inflight_ || inflight_ == 0) return;
  inflight_ = 0;
  next_fetch_at_ = now + config_.fetch_backoff_ms;
  if (r.error != Errc::none) {
    if (observe_epoch(r.leader_epoch, r.leader_id, now)) return;
    // The leader has a newer snapshot or we asked for bytes it does not have: start over
    // from a plain fetch, which names the current snapshot.
    snapshot_fetch_.reset();
    return;
  }
  if (role_ != Role::follower || m.from != leader_id_ || r.leader_epoch != epoch_ ||
      !snapshot_fetch_ || !(snapshot_fetch_->id == r.snapshot_id) ||
      r.position != static_cast<int64_t>(snapshot_fetch_->data.size()))
    return;
  heard_from_leader(now);
  snapshot_fetch_->data += r.bytes;
  next_fetch_at_ = now;
  if (static_cast<int64_t>(snapshot_fetch_->data.size()) >= r.size) {
    Snapshot s{snapshot_fetch_->id, std::move(snapshot_fetch_->data)};
    snapshot_fetch_.reset();
    snapshots_.save(s);
    log_.reset(s.id);
    flush_requested_ = log_.end_offset();
    // Everything before the snapshot is committed; what was queued for applying is inside it.
    out_.committed.clear();
    hw_ = std::max(hw_, s.id.offset);
    applied_ = s.id.offset;
    out_.load_snapshot = std::move(s);
  }
  follower_tick(now);
}

}  // namespace brokerd::raft
