// The event loop of one seed: the fault phase, healing, and the liveness wait.
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "sim_cluster.h"

namespace brokerd::raft::sim {

bool SimCluster::run() {
  for (auto& n : nodes_) start_node(n);
  Event c;
  c.time = 100;
  c.kind = Kind::chaos;
  schedule(c);
  Event p;
  p.time = 1;
  p.kind = Kind::propose;
  schedule(p);

  // Bounded: the fault phase has a fixed number of steps, the heal phase a time limit and a
  // step limit.
  const int64_t max_steps = opt_.steps + 50 * opt_.heal_limit_ms;
  while (!events_.empty() && stats_.steps < max_steps) {
    Event e = std::move(const_cast<Event&>(events_.top()));
    events_.pop();
    now_ = e.time;
    ++stats_.steps;
    try {
      step(e);
    } catch (const std::exception& ex) {
      checker_.fail(std::string("exception: ") + ex.what());
    }
    if (!checker_.failed()) checker_.after_step(nodes_);
    if (!checker_.failed()) check_acks();
    if (checker_.failed()) break;
    if (!healed_ && stats_.steps >= opt_.steps) heal();
    if (healed_ && liveness_reached()) break;
    if (healed_ && now_ - healed_at_ > opt_.heal_limit_ms) {
      checker_.fail("liveness: no stable leader committing entries within " +
                    std::to_string(opt_.heal_limit_ms) + " ms after the network healed");
    }
  }
  if (!checker_.failed() && !(healed_ && marker_)) checker_.fail("liveness: step limit reached");
  stats_.sim_time_ms = now_;
  stats_.elections = checker_.elections();
  stats_.committed = checker_.committed_end();
  stats_.heal_ms = now_ - healed_at_;
  return !checker_.failed();
}

void SimCluster::step(Event& e) {
  SimNode& n = nodes_[e.node];
  switch (e.kind) {
    case Kind::deliver:
      if (!n.raft) {
        refuse(e.msg);
        return;
      }
      if (opt_.trace) note("deliver " + describe(e.msg));
      n.raft->receive(e.msg, now_);
      drain(n);
      break;
    case Kind::refused:
      if (!n.raft || n.incarnation != e.incarnation) return;
      if (opt_.trace) note("refused " + describe(e.msg));
      n.raft->request_failed(e.msg.to, e.msg.correlation_id, true, now_);
      drain(n);
      break;
    case Kind::tick: {
      if (!n.raft || n.incarnation != e.incarnation) return;
      n.raft->tick(now_);
      drain(n);
      e.time = now_ + kTickMs;
      schedule(std::move(e));
      break;
    }
    case Kind::flush:
      if (!n.raft || n.incarnation != e.incarnation) return;
      n.log.flush(e.value);
      n.raft->on_log_flushed(now_);
      drain(n);
      break;
    case Kind::crash: {
      if (!n.raft || n.incarnation != e.incarnation || healed_) return;
      crash_node(n);
      e.kind = Kind::restart;
      e.incarnation = n.incarnation;
      e.time = now_ + e.value;
      schedule(std::move(e));
      break;
    }
    case Kind::restart:
      if (n.raft || n.incarnation != e.incarnation) return;
      note("restart node " + std::to_string(n.id));
      start_node(n);
      break;
    case Kind::chaos:
      if (healed_) return;
      chaos();
      e.time = now_ + rng_.range(30, 300);
      schedule(std::move(e));
      break;
    case Kind::propose:
      propose();
      e.time = now_ + rng_.range(5, 60);
      schedule(std::move(e));
      break;
  }
}

void SimCluster::chaos() {
  const size_t count = nodes_.size();
  auto pick = [&] { return static_cast<size_t>(rng_.range(0, static_cast<int64_t>(count) - 1)); };
  const int64_t roll = rng_.range(0, 99);
  std::ostringstream o;
  if (roll < 22) {
    SimNode& n = nodes_[pick()];
    if (!n.raft) return;
    schedule_crash(n, 0, rng_.chance(0.5) ? rng_.range(5, 200) : rng_.range(200, 2500));
    return;
  } else if (roll < 36) {
    std::vector<int> side(count);
    for (auto& s : side) s = static_cast<int>(rng_.range(0, 1));
    for (size_t a = 0; a < count; ++a)
      for (size_t b = 0; b < count; ++b) blocked_[a][b] = side[a] != side[b];
    o << "partition:";
    for (size_t a = 0; a < count; ++a) o << " " << (a + 1) << (side[a] ? "B" : "A");
  } else if (roll < 46) {
    const size_t a = pick(), b = pick();
    if (a == b) return;
    blocked_[a][b] = true;
    o << "one-way partition " << (a + 1) << " -x-> " << (b + 1);
  } else if (roll < 52) {
    // Cut the current leader off from everybody.
    for (auto& n : nodes_) {
      if (!n.raft || n.raft->role() != Role::leader) continue;
      const size_t a = static_cast<size_t>(n.id - 1);
      for (size_t b = 0; b < count; ++b) blocked_[a][b] = blocked_[b][a] = a != b;
      o << "isolate leader " << n.id;
      break;
    }
  } else if (roll < 70) {
    for (auto& row : blocked_) row.assign(count, false);
    o << "network healed";
  } else if (roll < 80) {
    const double losses[] = {0.0, 0.02, 0.1, 0.3};
    const double dups[] = {0.0, 0.02, 0.1};
    const int64_t delays[] = {3, 10, 30, 80};
    loss_ = losses[rng_.range(0, 3)];
    duplicate_ = dups[rng_.range(0, 2)];
    delay_max_ = delays[rng_.range(0, 3)];
    o << "network quality: loss " << loss_ << " dup " << duplicate_ << " delay<=" << delay_max_;
  } else if (roll < 92) {
    SimNode& n = nodes_[pick()];
    n.slow_disk = !n.slow_disk;
    o << "disk of node " << n.id << (n.slow_disk ? " slow" : " fast");
  } else {
    for (auto& n : nodes_) {
      if (n.raft && n.raft->role() == Role::leader) {
        o << "leader " << n.id << " resigns";
        n.raft->resign(now_);
        drain(n);
        break;
      }
    }
  }
  if (!o.str().empty()) note(o.str());
}

void SimCluster::heal() {
  healed_ = true;
  healed_at_ = now_;
  for (auto& row : blocked_) row.assign(nodes_.size(), false);
  loss_ = 0;
  duplicate_ = 0;
  delay_max_ = 10;
  if (opt_.voters >= 3 && rng_.chance(0.5)) {
    left_down_ = 1 + static_cast<ReplicaId>(rng_.range(0, opt_.voters - 1));
    for (auto& n : nodes_)
      if (n.raft && n.raft->role() == Role::leader && n.id <= opt_.voters) left_down_ = n.id;
  }
  note(left_down_ == kNoReplica ? "heal: network repaired, disks fast, every node up"
                                : "heal: network repaired, disks fast, every node up but " +
                                      std::to_string(left_down_) + ", which stays dead");
  for (auto& n : nodes_) {
    n.slow_disk = false;
    if (n.id == left_down_) {
      crash_node(n);
      ++n.incarnation;  // also cancels a restart already scheduled
      continue;
    }
    if (!n.raft) {
      ++n.incarnation;  // cancels the pending restart
      start_node(n);
    }
  }
}

bool SimCluster::liveness_reached() {
  const SimNode* leader = nullptr;
  for (auto& n : nodes_)
    if (n.raft && n.raft->role() == Role::leader) leader = &n;
  if (!leader) return false;
  for (auto& n : nodes_) {
    if (&n == leader || n.id == left_down_) continue;
    if (!n.raft || n.raft->epoch() != leader->raft->epoch() ||
        n.raft->leader_id() != leader->id || n.raft->role() != Role::follower)
      return false;
  }
  if (!marker_ || marker_->epoch != leader->raft->epoch()) {
    marker_ = leader->raft->propose("marker", now_);
    drain(const_cast<SimNode&>(*leader));
    return false;
  }
  for (auto& n : nodes_)
    if (n.id != left_down_ && n.sm_offset <= marker_->offset) return false;
  return true;
}

}  // namespace brokerd::raft::sim
