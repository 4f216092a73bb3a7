// The leader's duties: admitting produces, serving followers, the ISR and the high watermark.
#include <algorithm>

#include "brokerd/replication/replica.h"

namespace brokerd::replication {

void Replica::become_leader(int64_t now) {
  leading_ = true;
  lease_lost_ = false;
  phase_ = Phase::idle;
  in_flight_ = false;
  alter_.reset();
  leader_epoch_start_ = log_.end_offset();
  exposed_end_ = leader_epoch_start_;  // written in earlier epochs: anyone may hold it
  const auto before = epochs_.latest();
  epochs_.assign(state_.leader_epoch, leader_epoch_start_);
  if (epochs_.latest() != before) out_.epoch_cache_changed = true;
  followers_.clear();
  for (BrokerId b : state_.replicas) {
    if (b == config_.broker_id) continue;
    FollowerProgress p;
    p.last_caught_up = now;  // ISR members get a full lag period to fetch from the new leader
    p.last_fetch = now;
    followers_.emplace_back(b, p);
  }
}

void Replica::leader_reset_to(Offset start, int64_t /*now*/) {
  if (!is_leader() || start <= log_.end_offset()) return;
  log_.reset_to(start);
  epochs_.truncate_from_start(start);
  epochs_.assign(state_.leader_epoch, start);
  out_.epoch_cache_changed = true;
  leader_epoch_start_ = std::max(leader_epoch_start_, start);
  hw_ = std::max(hw_, start);
}

ErrorCode Replica::check_append(int16_t acks) const {
  if (!is_leader() || lease_lost_) return ErrorCode::not_leader_or_follower;
  if (acks == -1 && static_cast<int32_t>(state_.isr.size()) < effective_min_isr())
    return ErrorCode::not_enough_replicas;
  return ErrorCode::none;
}

void Replica::on_appended(uint64_t id, Offset last, int16_t acks, int64_t deadline, int64_t now) {
  if (!is_leader()) {
    out_.completions.push_back({id, unconfirmed_answer(last)});
    return;
  }
  if (acks == -1) acks_.push_back({id, last, deadline});
  else out_.completions.push_back({id, ErrorCode::none});
  maybe_advance_high_watermark();  // a partition with no other ISR member commits at once
  complete_acks(now);
}

void Replica::leader_appended(int64_t now) {
  if (!is_leader()) return;
  maybe_advance_high_watermark();
  complete_acks(now);
}

FetchDecision Replica::handle_fetch(const FetchRequest& r, int64_t now) {
  FetchDecision d;
  if (!is_leader() || !state_.is_replica(r.replica) || r.replica == config_.broker_id) {
    d.error = ErrorCode::not_leader_or_follower;
    return d;
  }
  // An epoch of -1 is a requester that does not know it (older clients): not checked.
  if (r.current_leader_epoch >= 0 && r.current_leader_epoch < state_.leader_epoch) d.error = ErrorCode::fenced_leader_epoch;
  else if (r.current_leader_epoch > state_.leader_epoch) d.error = ErrorCode::unknown_leader_epoch;
  else if (r.fetch_offset > log_.end_offset() || r.fetch_offset < log_.start_offset())
    d.error = ErrorCode::offset_out_of_range;
  d.log_start_offset = log_.start_offset();
  if (d.error != ErrorCode::none) {
    d.high_watermark = hw_;
    return d;
  }
  auto it = std::find_if(followers_.begin(), followers_.end(), [&](const auto& f) { return f.first == r.replica; });
  if (it == followers_.end()) it = followers_.insert(followers_.end(), {r.replica, FollowerProgress{}});
  FollowerProgress& p = it->second;
  const Offset leader_end = log_.end_offset();
  if (!config_.has_bug(Bug::not_written_after_fetch)) exposed_end_ = std::max(exposed_end_, leader_end);
  // Caught up: at the leader's end now, or at least where the leader's end was at its
  // previous fetch (it is no further behind than one fetch round).
  if (r.fetch_offset >= leader_end) p.last_caught_up = now;
  else if (r.fetch_offset >= p.leader_end_at_last_fetch) p.last_caught_up = std::max(p.last_caught_up, p.last_fetch);
  p.log_end = r.fetch_offset;
  p.log_start = r.log_start_offset;
  p.broker_epoch = r.replica_epoch;
  p.last_fetch = now;
  p.leader_end_at_last_fetch = leader_end;

  // Rejoin: a follower outside the ISR that holds everything committed and this epoch's start.
  const auto isr = maximal_isr();
  const bool in_isr = std::find(isr.begin(), isr.end(), r.replica) != isr.end();
  const bool caught_up = p.log_end >= hw_ && p.log_end >= leader_epoch_start_;
  if (!in_isr && may_propose_isr(now) && (caught_up || config_.has_bug(Bug::isr_before_caught_up))) {
    std::vector<BrokerId> grown = state_.isr;
    grown.push_back(r.replica);
    propose_isr(std::move(grown), now);
  }
  maybe_advance_high_watermark();
  complete_acks(now);
  d.high_watermark = hw_;
  return d;
}

Offset Replica::low_watermark() const {
  if (!is_leader()) return kNoOffset;
  Offset low = log_.start_offset();
  for (BrokerId b : maximal_isr()) {
    if (b == config_.broker_id) continue;
    const FollowerProgress* p = follower(b);
    if (!p || p->log_start == kNoOffset) return kNoOffset;
    low = std::min(low, p->log_start);
  }
  return low;
}

std::vector<std::pair<BrokerId, Offset>> Replica::followers_holding(Offset offset) const {
  std::vector<std::pair<BrokerId, Offset>> out;
  if (!is_leader()) return out;
  for (BrokerId b : state_.isr) {
    if (b == config_.broker_id) continue;
    const FollowerProgress* p = follower(b);
    if (p && p->log_end >= offset && p->log_start != kNoOffset && p->log_start <= offset) out.emplace_back(b, p->log_end);
  }
  return out;
}

EpochEndResponse Replica::handle_epoch_end(const EpochEndRequest& r) const {
  EpochEndResponse resp;
  resp.current_leader_epoch = r.current_leader_epoch;
  if (!is_leader()) resp.error = ErrorCode::not_leader_or_follower;
  else if (r.current_leader_epoch >= 0 && r.current_leader_epoch < state_.leader_epoch)
    resp.error = ErrorCode::fenced_leader_epoch;
  else if (r.current_leader_epoch > state_.leader_epoch) resp.error = ErrorCode::unknown_leader_epoch;
  if (resp.error != ErrorCode::none) return resp;
  const EpochEnd end = epochs_.end_for(r.leader_epoch, log_.end_offset());
  resp.leader_epoch = end.epoch;
  resp.end_offset = end.end_offset;
  return resp;
}

void Replica::handle_alter_partition(const AlterPartitionRequest& answered, ErrorCode error,
                                     const PartitionState& state, int64_t now) {
  const bool bug = config_.has_bug(Bug::stale_alter_answer);
  if (!alter_ || !(alter_->request == answered || bug)) return;
  if (error == ErrorCode::none) {
    alter_.reset();
    apply(state, now);
    return;
  }
  // A refusal made at the proposal's own partition epoch is final. Any other answer leaves
  // the outcome open: no answer in time, another controller, or a view newer than ours
  // (INVALID_UPDATE_VERSION may be this very proposal, committed from an earlier copy). The
  // proposal's members then keep counting towards the high watermark until newer metadata
  // ends it (apply) or a resend settles it.
  if (error == ErrorCode::ineligible_replica || error == ErrorCode::invalid_request ||
      error == ErrorCode::invalid_replica_assignment || bug) {
    alter_.reset();
    alter_refused_at_ = now;
  }
}

void Replica::check_lease(bool metadata_current, int64_t lease_ms, int64_t now) {
  if (metadata_current || !is_leader()) {
    lease_lost_ = false;
    return;
  }
  if (lease_lost_) return;
  bool others = false;
  for (BrokerId b : state_.isr) {
    if (b == config_.broker_id) continue;
    others = true;
    const FollowerProgress* p = follower(b);
    if (p && now - p->last_fetch < lease_ms) return;  // still followed
  }
  if (!others) return;
  lease_lost_ = true;
  fail_acks();
}

bool Replica::may_propose_isr(int64_t now) const {
  return !alter_ && (alter_refused_at_ < 0 || now - alter_refused_at_ >= config_.alter_partition_retry_ms);
}

void Replica::propose_isr(std::vector<BrokerId> isr, int64_t now) {
  AlterPartitionRequest r;
  r.leader = config_.broker_id;
  r.leader_epoch = state_.leader_epoch;
  r.partition_epoch = state_.partition_epoch;
  r.new_isr = std::move(isr);
  for (BrokerId b : r.new_isr) {
    const FollowerProgress* p = b == config_.broker_id ? nullptr : follower(b);
    r.broker_epochs.push_back(p ? p->broker_epoch : kNoBrokerEpoch);
  }
  alter_ = PendingAlter{r, now};
  out_.alter_partition = r;
}

void Replica::maybe_advance_high_watermark() {
  if (!is_leader()) return;
  // KIP-966: commit only while the controller's ISR has min.insync.replicas members. The
  // members a pending AlterPartition adds count towards the minimum end (they hold the data)
  // but not towards that size: the controller may refuse them, and then it would elect
  // among replicas that never had what was committed.
  if (static_cast<int32_t>(state_.isr.size()) < effective_min_isr()) return;
  const auto isr = maximal_isr();
  std::vector<Offset> ends;
  for (BrokerId b : isr) {
    if (b == config_.broker_id) {
      ends.push_back(log_.end_offset());
      continue;
    }
    const FollowerProgress* p = follower(b);
    ends.push_back(p ? p->log_end : kNoOffset);
  }
  std::sort(ends.begin(), ends.end());
  Offset candidate = ends.front();
  if (config_.has_bug(Bug::hw_before_isr) && ends.size() > 1) candidate = ends[1];
  if (config_.has_bug(Bug::ack_after_leader_write)) candidate = log_.end_offset();
  if (candidate > hw_) hw_ = std::min(candidate, log_.end_offset());
}

void Replica::complete_acks(int64_t now) {
  (void)now;
  const bool enough = static_cast<int32_t>(state_.isr.size()) >= effective_min_isr();
  for (auto it = acks_.begin(); it != acks_.end();) {
    if (it->last < hw_) {
      out_.completions.push_back(
          {it->id, enough ? ErrorCode::none : ErrorCode::not_enough_replicas_after_append});
      it = acks_.erase(it);
    } else {
      ++it;
    }
  }
}

ErrorCode Replica::unconfirmed_answer(Offset last) const {
  return last < exposed_end_ ? kAppendedUnconfirmed : ErrorCode::not_leader_or_follower;
}

void Replica::fail_acks() {
  bool unexposed = false;
  for (const auto& a : acks_) {
    const ErrorCode answer = unconfirmed_answer(a.last);
    unexposed = unexposed || answer != kAppendedUnconfirmed;
    out_.completions.push_back({a.id, answer});
  }
  acks_.clear();
  if (unexposed) drop_unexposed();
}

void Replica::drop_unexposed() {
  // Nothing committed is past the exposed end unless the ISR is this replica alone.
  const Offset keep = std::max(exposed_end_, hw_);
  if (keep >= log_.end_offset()) return;
  if (!leading_) {
    truncate(keep);
    return;
  }
  log_.truncate_to(keep);
  // The leader's own epoch starts at or before keep: it stays, even holding nothing now.
  epochs_.truncate_from_end(keep + 1);
  out_.epoch_cache_changed = true;
}

}  // namespace brokerd::replication
