// The follower's duties: find where its log agrees with the leader's, then fetch.
#include <algorithm>

#include "brokerd/replication/replica.h"

namespace brokerd::replication {

void Replica::become_follower(int64_t now) {
  (void)now;
  const bool was_leading = leading_;
  leading_ = false;
  if (was_leading) fail_acks();
  alter_.reset();
  followers_.clear();
  in_flight_ = false;
  phase_ = state_.leader == kNoBroker ? Phase::idle : Phase::truncating;
}

std::optional<FollowerRequest> Replica::next_request(int64_t now) {
  (void)now;
  if (leading_ || in_flight_ || state_.leader == kNoBroker || state_.leader == config_.broker_id) return std::nullopt;
  if (phase_ == Phase::idle) phase_ = Phase::truncating;
  if (phase_ == Phase::truncating) {
    const auto latest = epochs_.latest();
    if (!latest || config_.has_bug(Bug::skip_truncation)) {
      // Nothing to ask about (an empty log, or a cache that lost its entries): keep only
      // what was known committed.
      if (!latest && !config_.has_bug(Bug::skip_truncation)) truncate(hw_);
      phase_ = Phase::fetching;
    } else {
      in_flight_ = true;
      return EpochEndRequest{config_.broker_id, state_.leader_epoch, latest->epoch};
    }
  }
  in_flight_ = true;
  return FetchRequest{config_.broker_id, state_.leader_epoch, log_.end_offset(), log_.start_offset()};
}

void Replica::handle_epoch_end_response(const EpochEndResponse& r, int64_t now) {
  (void)now;
  if (leading_ || phase_ != Phase::truncating || r.current_leader_epoch != state_.leader_epoch) return;
  // The leader answers with an epoch at most the one asked about, this replica's latest. A
  // larger one answers an earlier question (asked before this replica cut its cache back):
  // taken now it would read as "an epoch never seen here" and skip the truncation. The
  // current question is still out.
  const auto latest = epochs_.latest();
  if (r.error == ErrorCode::none && latest && r.leader_epoch > latest->epoch) return;
  in_flight_ = false;
  if (r.error != ErrorCode::none) return;  // ask again (or wait for newer metadata)
  if (r.leader_epoch == kNoEpoch || r.end_offset < 0) {
    truncate(hw_);  // the leader knows no epoch of ours: keep what was committed
    phase_ = Phase::fetching;
    return;
  }
  // KIP-279: where the leader's answer epoch ends here.
  const EpochEnd mine = epochs_.end_for(r.leader_epoch, log_.end_offset());
  if (mine.epoch != kNoEpoch && mine.epoch != r.leader_epoch) {
    // This replica never saw that epoch: cut back to the end of its own largest epoch below
    // it and ask again about that one.
    truncate(mine.end_offset);
    return;
  }
  const Offset mine_end = mine.epoch == kNoEpoch ? log_.end_offset() : mine.end_offset;
  truncate(std::min(mine_end, r.end_offset));
  phase_ = Phase::fetching;
}

void Replica::handle_fetch_response(const FetchResponse& r, int64_t now) {
  (void)now;
  if (leading_ || phase_ != Phase::fetching || r.leader_epoch != state_.leader_epoch) return;
  in_flight_ = false;
  if (r.error == ErrorCode::offset_out_of_range) {
    if (log_.end_offset() < r.log_start_offset) {
      log_.reset_to(r.log_start_offset);
      epochs_.truncate_from_start(r.log_start_offset);
      out_.epoch_cache_changed = true;
      hw_ = std::max(hw_, r.log_start_offset);
    } else {
      phase_ = Phase::truncating;  // past the leader's end: find the common point again
    }
    return;
  }
  if (r.error != ErrorCode::none) return;
  for (const Batch& b : r.batches) {
    // A batch past the log end continues it across a gap: a compacted leader removed the
    // batches in between. One that starts before the end does not: the next fetch asks again.
    if (b.base_offset < log_.end_offset() || b.last_offset < b.base_offset || b.leader_epoch > state_.leader_epoch)
      break;
    if (!log_.append_replica(b)) break;  // not written: the batches after it would leave a hole
    const auto latest = epochs_.latest();
    if (!latest || b.leader_epoch != latest->epoch) {
      epochs_.assign(b.leader_epoch, b.base_offset);
      out_.epoch_cache_changed = true;
    }
  }
  hw_ = std::max(hw_, std::min(r.high_watermark, log_.end_offset()));
  // The leader deleted below its log start (DeleteRecords, retention): so does this replica,
  // as far as it holds what is committed (the leader's start never passes its high watermark).
  const Offset start = std::min(r.log_start_offset, hw_);
  if (start > log_.start_offset()) {
    log_.advance_start(start);
    epochs_.truncate_from_start(start);
    out_.epoch_cache_changed = true;
  }
}

void Replica::request_failed(int64_t now) {
  (void)now;
  in_flight_ = false;
}

}  // namespace brokerd::replication
