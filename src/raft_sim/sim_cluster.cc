#include "sim_cluster.h"

#include <cstdio>
#include <sstream>

namespace brokerd::raft::sim {
namespace {
constexpr size_t kTraceLines = 60;
constexpr size_t kMaxPending = 256;
}  // namespace

std::string encode_state(Offset offset, uint64_t chain) {
  return std::to_string(offset) + ":" + std::to_string(chain);
}

bool decode_state(const std::string& data, Offset& offset, uint64_t& chain) {
  auto colon = data.find(':');
  if (colon == std::string::npos) return false;
  offset = std::stoll(data.substr(0, colon));
  chain = std::stoull(data.substr(colon + 1));
  return true;
}

SimCluster::SimCluster(uint64_t seed, SimOptions options)
    : seed_(seed), opt_(options), rng_(seed), nodes_(options.voters + options.observers) {
  const size_t n = nodes_.size();
  const double aims[] = {0.0, 0.2, 0.6};
  crash_after_vote_ = aims[rng_.range(0, 2)];
  crash_after_election_ = aims[rng_.range(0, 2)];
  const int32_t fetch_sizes[] = {1, 2, 8};
  max_fetch_entries_ = fetch_sizes[rng_.range(0, 2)];
  // Odd seeds: a crashed process's address refuses connections. Even seeds: a dead node is
  // silent, as a host that lost power or a cut link.
  refuse_ = seed % 2 == 1 ? 0.7 : 0.0;
  blocked_.assign(n, std::vector<bool>(n, false));
  for (size_t i = 0; i < n; ++i) {
    nodes_[i].id = static_cast<ReplicaId>(i + 1);
    const ReplicaId id = nodes_[i].id;
    nodes_[i].log.set_append_hook(
        [this, id](const Entry& e, uint64_t chain) { checker_.on_append(id, e, chain); });
  }
}

RaftConfig SimCluster::config_for(const SimNode& n) const {
  RaftConfig c;
  c.node_id = n.id;
  for (int v = 1; v <= opt_.voters; ++v) c.voters.push_back(v);
  // Short timeouts: more elections per simulated second, same logic.
  c.election_timeout_ms = 300;
  c.fetch_timeout_ms = 600;
  c.request_timeout_ms = 100;
  c.fetch_backoff_ms = 20;
  c.max_fetch_entries = max_fetch_entries_;
  c.snapshot_chunk_bytes = 8;
  uint64_t s = seed_ ^ (static_cast<uint64_t>(n.id) << 32) ^ static_cast<uint64_t>(n.incarnation);
  c.random_seed = splitmix64(s);
  c.bugs = opt_.bugs;
  return c;
}

void SimCluster::note(const std::string& line) {
  std::string l = "t=" + std::to_string(now_) + " " + line;
  if (opt_.trace) std::printf("%s\n", l.c_str());
  trace_.push_back(std::move(l));
  if (trace_.size() > kTraceLines) trace_.pop_front();
}

void SimCluster::schedule(Event e) {
  e.seq = ++seq_;
  events_.push(std::move(e));
}

void SimCluster::start_node(SimNode& n) {
  n.raft = std::make_unique<RaftNode>(config_for(n), n.log, n.quorum_state, n.snapshots);
  n.sm_offset = 0;
  n.sm_chain = 0;
  n.apply_since_snapshot = 0;
  n.raft->start(now_);
  n.last_hw = n.raft->high_watermark();
  n.last_role = n.raft->role();
  n.last_epoch = n.raft->epoch();
  n.last_vote = n.raft->voted_for();
  starting_ = true;
  drain(n);
  starting_ = false;
  Event t;
  t.time = now_ + rng_.range(1, kTickMs);
  t.kind = Kind::tick;
  t.node = static_cast<size_t>(n.id - 1);
  t.incarnation = n.incarnation;
  schedule(std::move(t));
}

void SimCluster::crash_node(SimNode& n) {
  if (!n.raft) return;
  note("crash node " + std::to_string(n.id) + " (log " + std::to_string(n.log.end_offset()) +
       ", flushed " + std::to_string(n.log.flushed_end_offset()) + ")");
  n.log.crash();
  n.raft.reset();
  ++n.incarnation;
  ++stats_.crashes;
}

void SimCluster::schedule_crash(const SimNode& n, int64_t delay, int64_t down) {
  Event c;
  c.time = now_ + delay;
  c.kind = Kind::crash;
  c.node = static_cast<size_t>(n.id - 1);
  c.incarnation = n.incarnation;
  c.value = down;
  schedule(c);
}

void SimCluster::aim_crashes(SimNode& n) {
  if (healed_ || !n.raft) return;
  // The most fragile moments of an election: a vote just granted, a leader just elected.
  if (n.raft->voted_for() != n.last_vote && n.raft->voted_for() != kNoReplica &&
      n.raft->voted_for() != n.id && rng_.chance(crash_after_vote_)) {
    schedule_crash(n, rng_.range(0, 10), rng_.range(1, 100));
  }
  if (n.raft->role() == Role::leader && n.last_role != Role::leader &&
      rng_.chance(crash_after_election_)) {
    schedule_crash(n, rng_.range(0, 60),
                   rng_.chance(0.5) ? rng_.range(20, 600) : rng_.range(600, 3000));
  }
  n.last_vote = n.raft->voted_for();
}

void SimCluster::send(const Message& m) {
  ++stats_.messages;
  const auto from = static_cast<size_t>(m.from - 1), to = static_cast<size_t>(m.to - 1);
  if (to >= nodes_.size() || blocked_[from][to] || rng_.chance(loss_)) return;
  const int copies = rng_.chance(duplicate_) ? 2 : 1;
  for (int i = 0; i < copies; ++i) {
    Event e;
    e.time = now_ + rng_.range(1, delay_max_);
    if (rng_.chance(0.03)) e.time += rng_.range(50, 400);  // a straggler, for reordering
    e.kind = Kind::deliver;
    e.node = to;
    e.msg = m;
    schedule(std::move(e));
  }
}

void SimCluster::refuse(const Message& request) {
  if (refuse_ == 0 || is_response(request.body) || !rng_.chance(refuse_)) return;
  const auto from = static_cast<size_t>(request.from - 1);
  if (from >= nodes_.size() || !nodes_[from].raft) return;
  Event e;
  e.time = now_ + rng_.range(1, delay_max_);
  e.kind = Kind::refused;
  e.node = from;
  e.incarnation = nodes_[from].incarnation;
  e.msg = request;
  schedule(std::move(e));
}

void SimCluster::apply_output(SimNode& n, RaftOutput& out) {
  if (out.load_snapshot) {
    Offset off = 0;
    uint64_t chain = 0;
    if (!decode_state(out.load_snapshot->data, off, chain) ||
        off != out.load_snapshot->id.offset) {
      checker_.fail("node " + std::to_string(n.id) + " loaded a malformed snapshot");
      return;
    }
    checker_.on_snapshot_load(n, off, chain);
    n.sm_offset = off;
    n.sm_chain = chain;
    if (n.log.start_offset() == off) n.log.set_base_chain(chain);
    if (!starting_) {
      ++stats_.snapshots_installed;
      note("node " + std::to_string(n.id) + " loaded snapshot at " + std::to_string(off));
    }
  }
  for (const auto& e : out.committed) {
    if (e.offset != n.sm_offset) {
      checker_.fail("node " + std::to_string(n.id) + " applied offset " +
                    std::to_string(e.offset) + " but expected " + std::to_string(n.sm_offset));
      return;
    }
    n.sm_chain = chain_hash(n.sm_chain, e);
    n.sm_offset = e.offset + 1;
    checker_.on_apply(n, e);
    ++n.apply_since_snapshot;
  }
  if (out.flush_up_to) {
    Event f;
    f.time = now_ + (n.slow_disk ? rng_.range(30, 400) : rng_.range(1, 8));
    f.kind = Kind::flush;
    f.node = static_cast<size_t>(n.id - 1);
    f.incarnation = n.incarnation;
    f.value = *out.flush_up_to;
    schedule(std::move(f));
  }
  for (const auto& m : out.messages) send(m);
}

void SimCluster::drain(SimNode& n) {
  for (int round = 0; round < 4 && n.raft; ++round) {
    RaftOutput out = n.raft->take_output();
    if (out.messages.empty() && out.committed.empty() && !out.flush_up_to && !out.load_snapshot)
      break;
    apply_output(n, out);
    if (n.apply_since_snapshot >= 40) {
      n.apply_since_snapshot = 0;
      n.raft->take_snapshot(n.sm_offset, encode_state(n.sm_offset, n.sm_chain));
    }
  }
  if (n.raft) aim_crashes(n);
  if (n.raft && (n.raft->role() != n.last_role || n.raft->epoch() != n.last_epoch)) {
    std::ostringstream o;
    o << "node " << n.id << " " << role_name(n.last_role) << "@" << n.last_epoch << " -> "
      << role_name(n.raft->role()) << "@" << n.raft->epoch() << " (log end "
      << n.log.end_offset() << ", hw " << n.raft->high_watermark() << ")";
    note(o.str());
    n.last_role = n.raft->role();
    n.last_epoch = n.raft->epoch();
  }
}

void SimCluster::propose() {
  SimNode* leader = nullptr;
  for (auto& n : nodes_) {
    if (n.raft && n.raft->role() == Role::leader &&
        (!leader || n.raft->epoch() > leader->raft->epoch()))
      leader = &n;
  }
  if (!leader) return;
  std::string payload = "v" + std::to_string(++proposals_);
  auto at = leader->raft->propose(payload, now_);
  if (!at) return;
  if (pending_.size() < kMaxPending)
    pending_.push_back({static_cast<size_t>(leader->id - 1), leader->incarnation, *at, payload});
  drain(*leader);
}

void SimCluster::check_acks() {
  for (size_t i = 0; i < pending_.size();) {
    const Pending& p = pending_[i];
    SimNode& n = nodes_[p.node];
    const bool same_leader = n.raft && n.incarnation == p.incarnation &&
                             n.raft->role() == Role::leader && n.raft->epoch() == p.at.epoch;
    if (same_leader && n.raft->high_watermark() <= p.at.offset) {
      ++i;
      continue;
    }
    if (same_leader) {
      // Acknowledged to the client: the checker now holds it as committed forever.
      const Entry* e = n.log.entry_at(p.at.offset);
      auto c = checker_.committed_chain(p.at.offset);
      if ((e && (e->payload != p.payload || e->epoch != p.at.epoch)) || !c) {
        checker_.fail("leader " + std::to_string(n.id) + " acknowledged offset " +
                      std::to_string(p.at.offset) + " but holds a different entry there");
      }
      ++stats_.acked;
    }
    pending_[i] = std::move(pending_.back());
    pending_.pop_back();
  }
}

}  // namespace brokerd::raft::sim
