// Fetch on the leader: validate the fetcher's position against the log, record its progress,
// and answer with entries, a diverging epoch, or the snapshot to fetch first.
#include "brokerd/raft/node.h"

namespace brokerd::raft {

void RaftNode::handle_fetch_request(const Message& m, const FetchRequest& r, int64_t now) {
  FetchResponse resp;
  resp.leader_id = known_leader();
  resp.leader_epoch = epoch_;
  if (role_ != Role::leader) {
    resp.error = r.current_leader_epoch > epoch_ ? Errc::unknown_leader_epoch
                                                 : Errc::not_leader_or_follower;
    reply(m, std::move(resp));
    return;
  }
  if (r.current_leader_epoch != epoch_) {
    resp.error = r.current_leader_epoch < epoch_ ? Errc::fenced_leader_epoch
                                                 : Errc::unknown_leader_epoch;
    reply(m, std::move(resp));
    return;
  }
  resp.high_watermark = hw_;
  resp.log_start_offset = log_.start_offset();
  auto snapshot_answer = [&] {
    if (auto s = snapshots_.latest()) resp.snapshot_id = s->id;
    reply(m, std::move(resp));
  };
  if (r.fetch_offset < log_.start_offset()) return snapshot_answer();
  if (!config_.has_bug(Bug::skip_divergence_check)) {
    const OffsetAndEpoch end = log_.end_offset_for_epoch(r.last_fetched_epoch);
    if (end.epoch == kNoEpoch) return snapshot_answer();
    if (end.epoch != r.last_fetched_epoch || r.fetch_offset > end.offset) {
      resp.diverging_epoch = end;
      reply(m, std::move(resp));
      return;
    }
  } else if (r.fetch_offset > log_.end_offset()) {
    resp.diverging_epoch = OffsetAndEpoch{log_.end_offset(), log_.last_epoch()};
    reply(m, std::move(resp));
    return;
  }
  // The position is valid: everything below fetch_offset matches our log.
  Progress& p = progress_[m.from];
  p.end_offset = r.fetch_offset;
  p.last_fetch = now;
  p.acknowledged = true;
  if (r.fetch_offset >= log_.end_offset()) p.last_caught_up = now;
  update_high_watermark();
  resp.high_watermark = hw_;
  resp.entries = log_.read(r.fetch_offset, static_cast<size_t>(r.max_entries));
  reply(m, std::move(resp));
}

}  // namespace brokerd::raft
