#include "sim_cluster.h"

#include <algorithm>
#include <cstdio>

namespace brokerd::replication::sim {

namespace {

constexpr int64_t kTickMs = 5;
constexpr int64_t kFaultEveryMs = 50;
constexpr int64_t kSettleMs = 8'000;
constexpr int64_t kHeartbeatMs = 20;
constexpr int64_t kSessionMs = 150;
constexpr int64_t kMetadataPushMs = 50;
constexpr int64_t kRequestTimeoutMs = 100;
constexpr int64_t kProduceTimeoutMs = 300;
constexpr int64_t kProducerRetryMs = 400;
constexpr int kProducers = 3;

std::string isr_text(const std::vector<BrokerId>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "}";
}

}  // namespace

SimCluster::SimCluster(uint64_t seed, SimOptions options)
    : options_(options),
      rng_(seed),
      nodes_(static_cast<size_t>(options.nodes)),
      cut_(static_cast<size_t>(options.nodes + 1), std::vector<bool>(static_cast<size_t>(options.nodes + 1), false)),
      last_heartbeat_(static_cast<size_t>(options.nodes), 0),
      known_incarnation_(static_cast<size_t>(options.nodes), 0),
      min_isr_(options.nodes / 2 + 1),
      checker_(options.nodes) {
  for (int n = 0; n < options_.nodes; ++n) {
    partition_.replicas.push_back(n);
    partition_.isr.push_back(n);
    live_.live.push_back(n);
    live_.epochs.emplace_back(n, 0);
  }
  partition_.leader = 0;
  for (int n = 0; n < options_.nodes; ++n) {
    Node& node = nodes_[static_cast<size_t>(n)];
    node.replica = std::make_unique<Replica>(replica_config(n), node.log, node.epochs, 0);
  }
  for (int p = 0; p < kProducers; ++p) producers_.push_back(Producer{p, next_identity_++, 0, 0, false, 0, 0, 0});
}

ReplicaConfig SimCluster::replica_config(int node) const {
  ReplicaConfig c;
  c.broker_id = node;
  c.min_insync_replicas = min_isr_;
  c.replica_lag_time_max_ms = 200;
  c.alter_partition_retry_ms = 200;
  c.bugs = options_.bugs;
  return c;
}

void SimCluster::log(std::string line) {
  line = "t=" + std::to_string(now_) + " " + line;
  if (options_.trace) std::printf("%s\n", line.c_str());
  trace_.push_back(std::move(line));
  if (trace_.size() > 60) trace_.pop_front();
}

void SimCluster::send(int from, int to, Payload p) {
  const bool network_link = from <= options_.nodes && to <= options_.nodes;
  if (network_link && cut_[static_cast<size_t>(from)][static_cast<size_t>(to)]) return;
  if (faults_on_ && rng_.chance(0.01)) return;
  // Now and then a message is slow (a long queue, a retransmission) and arrives after ones
  // sent later. The controller's answer to an AlterPartition often does, after the metadata
  // that carries the change (a broker hears of both on different paths).
  const bool slow = faults_on_ && (rng_.chance(0.03) || (std::holds_alternative<AlterResp>(p) && rng_.chance(0.3)));
  const int64_t delay = slow ? rng_.range(20, 120) : rng_.range(1, 10);
  queue_.push(Event{now_ + delay, order_++, from, to, std::move(p)});
}

void SimCluster::deliver(const Event& e) {
  ++stats_.events;
  const bool network_link = e.from <= options_.nodes && e.to <= options_.nodes;
  if (network_link && cut_[static_cast<size_t>(e.from)][static_cast<size_t>(e.to)]) return;
  if (e.to < options_.nodes) {
    if (!nodes_[static_cast<size_t>(e.to)].alive) return;
    on_node_message(e.to, e.from, e.payload);
  } else if (e.to == controller_endpoint()) {
    on_controller_message(e.from, e.payload);
  } else {
    on_producer_message(e.to - options_.nodes - 1, e.payload);
  }
}

void SimCluster::on_node_message(int n, int from, const Payload& p) {
  Node& node = nodes_[static_cast<size_t>(n)];
  Replica& r = *node.replica;
  if (auto* m = std::get_if<MetadataPush>(&p)) {
    if (m->incarnation == node.incarnation) r.apply(m->state, now_);
  } else if (auto* m = std::get_if<ProduceReq>(&p)) {
    const ErrorCode err = r.check_append(-1);
    if (err != ErrorCode::none) {
      send(n, from, ProduceResp{m->id, err, -1});
      return;
    }
    Offset at = node.log.find(m->record.producer, m->record.sequence);
    if (at < 0) at = node.log.append_leader(r.leader_epoch(), m->record);
    node.produces[m->id] = {m->producer, at};
    r.on_appended(m->id, at, -1, now_ + kProduceTimeoutMs, now_);
  } else if (auto* m = std::get_if<FetchRequest>(&p)) {
    const FetchDecision d = r.handle_fetch(*m, now_);
    FetchResp resp;
    resp.response.error = d.error;
    resp.response.leader_epoch = m->current_leader_epoch;
    resp.response.high_watermark = d.high_watermark;
    resp.response.log_start_offset = d.log_start_offset;
    if (d.error == ErrorCode::none) {
      for (auto& [batch, bytes] : node.log.read(m->fetch_offset, 4)) {
        resp.storage.push_back(std::move(bytes));
        resp.response.batches.push_back(Batch{batch.base, batch.last(), batch.epoch, resp.storage.back()});
      }
    }
    send(n, from, std::move(resp));
  } else if (auto* m = std::get_if<EpochEndRequest>(&p)) {
    send(n, from, r.handle_epoch_end(*m));
  } else if (auto* m = std::get_if<FetchResp>(&p)) {
    const Offset before = node.log.end_offset();
    FetchResponse resp = m->response;  // the batches' bytes live in the message's storage
    for (size_t i = 0; i < resp.batches.size(); ++i) resp.batches[i].bytes = m->storage[i];
    r.handle_fetch_response(resp, now_);
    if (!r.awaiting_answer()) node.request_sent = -1;  // else a late answer to an earlier request
    node.next_request_at = now_ + (node.log.end_offset() == before ? 10 : 0);
  } else if (auto* m = std::get_if<EpochEndResponse>(&p)) {
    const Offset before = node.log.end_offset();
    r.handle_epoch_end_response(*m, now_);
    if (node.log.end_offset() < before) {
      ++stats_.truncations;
      log("node " + std::to_string(n) + " truncated " + std::to_string(before) + " -> " +
          std::to_string(node.log.end_offset()) + " (leader " + std::to_string(from) + ": epoch " +
          std::to_string(m->leader_epoch) + " ends at " + std::to_string(m->end_offset) + ")");
    }
    if (!r.awaiting_answer()) node.request_sent = -1;
  } else if (auto* m = std::get_if<AlterResp>(&p)) {
    r.handle_alter_partition(m->request, m->error, m->state, now_);
  }
  drain(n);
}

void SimCluster::drain(int n) {
  Node& node = nodes_[static_cast<size_t>(n)];
  ReplicaOutput out = node.replica->take_output();
  for (const Completion& c : out.completions) {
    auto it = node.produces.find(c.id);
    if (it == node.produces.end()) continue;
    send(n, producer_endpoint(it->second.first), ProduceResp{c.id, c.error, it->second.second});
    node.produces.erase(it);
  }
  if (out.alter_partition) {
    log("node " + std::to_string(n) + " asks ISR " + isr_text(out.alter_partition->new_isr));
    send(n, controller_endpoint(), *out.alter_partition);
  }
  if (out.epoch_cache_changed) node.disk_epochs = node.epochs;
}

void SimCluster::controller_change(PartitionState next, const char* why) {
  if (next == partition_) return;
  if (next.leader_epoch != partition_.leader_epoch) ++stats_.leader_changes;
  partition_ = std::move(next);
  log(std::string("controller: ") + why + ": leader " + std::to_string(partition_.leader) + " epoch " +
      std::to_string(partition_.leader_epoch) + " isr " + isr_text(partition_.isr) + " elr " + isr_text(partition_.elr));
  for (int n = 0; n < options_.nodes; ++n) send(controller_endpoint(), n, MetadataPush{partition_, known_incarnation_[static_cast<size_t>(n)]});
}

void SimCluster::on_controller_message(int from, const Payload& p) {
  if (auto* m = std::get_if<Heartbeat>(&p)) {
    auto& known = known_incarnation_[static_cast<size_t>(m->node)];
    last_heartbeat_[static_cast<size_t>(m->node)] = now_;
    if (m->incarnation > known) {
      known = m->incarnation;
      std::erase_if(live_.epochs, [&](const auto& e) { return e.first == m->node; });
      live_.epochs.emplace_back(m->node, known);
      std::erase(live_.live, m->node);
      controller_change(on_broker_unclean_restart(partition_, m->node, live_, min_isr_, false, options_.bugs),
                        "registered after a crash");
    } else if (m->incarnation == known && !live_.is_live(m->node)) {
      live_.live.push_back(m->node);
      controller_change(on_broker_unfenced(partition_, live_, false, options_.bugs), "unfenced");
    }
  } else if (auto* m = std::get_if<AlterPartitionRequest>(&p)) {
    const AlterPartitionResult res = apply_alter_partition(partition_, *m, live_, min_isr_);
    if (res.error == ErrorCode::none) controller_change(res.state, "AlterPartition");
    send(controller_endpoint(), from, AlterResp{*m, res.error, res.state});
  }
}

void SimCluster::on_producer_message(int p, const Payload& payload) {
  auto* m = std::get_if<ProduceResp>(&payload);
  if (!m) return;
  Producer& pr = producers_[static_cast<size_t>(p)];
  if (m->id != pr.in_flight) return;
  pr.in_flight = 0;
  if (m->error != ErrorCode::none) {
    pr.next_send = now_ + 20;
    if (m->error != ErrorCode::not_leader_or_follower) {
      pr.maybe_written = true;
    } else if (!pr.maybe_written && rng_.chance(0.5)) {
      pr.identity = next_identity_++;
      pr.sequence = 0;
    }
    return;
  }
  checker_.acknowledged(record_of(pr), m->offset);
  ++stats_.acked;
  ++pr.sequence;
  ++pr.value;
  pr.maybe_written = false;
  pr.next_send = now_ + rng_.range(0, 5);
}

void SimCluster::tick_nodes() {
  for (int n = 0; n < options_.nodes; ++n) {
    Node& node = nodes_[static_cast<size_t>(n)];
    if (!node.alive) continue;
    Replica& r = *node.replica;
    r.tick(now_);
    if (node.request_sent >= 0 && now_ - node.request_sent > kRequestTimeoutMs) {
      r.request_failed(now_);
      node.request_sent = -1;
    }
    if (node.request_sent < 0 && now_ >= node.next_request_at) {
      if (auto req = r.next_request(now_)) {
        node.request_sent = now_;
        // The fetcher names the process that fetches (KIP-903): here its incarnation.
        if (auto* f = std::get_if<FetchRequest>(&*req)) f->replica_epoch = node.incarnation;
        std::visit([&](auto& q) { send(n, r.leader(), q); }, *req);
      }
    }
    if (now_ % kHeartbeatMs == 0) send(n, controller_endpoint(), Heartbeat{n, node.incarnation});
    drain(n);
  }
}

void SimCluster::tick_controller() {
  for (int n = 0; n < options_.nodes; ++n) {
    if (live_.is_live(n) && now_ - last_heartbeat_[static_cast<size_t>(n)] > kSessionMs) {
      std::erase(live_.live, n);
      controller_change(on_broker_fenced(partition_, n, live_, min_isr_, false, options_.bugs), "fenced");
    }
    Node& node = nodes_[static_cast<size_t>(n)];
    // Whole again once the controller has seen it restart and taken it back into the ISR.
    if (node.alive && node.impaired && known_incarnation_[static_cast<size_t>(n)] == node.incarnation &&
        partition_.in_isr(n))
      node.impaired = false;
  }
  if (now_ % kMetadataPushMs == 0)
    for (int n = 0; n < options_.nodes; ++n) send(controller_endpoint(), n, MetadataPush{partition_, known_incarnation_[static_cast<size_t>(n)]});
}

Record SimCluster::record_of(const Producer& pr) {
  return Record{pr.identity, pr.sequence, (static_cast<int64_t>(pr.id) << 32) | pr.value};
}

void SimCluster::tick_producers() {
  for (auto& pr : producers_) {
    if (pr.in_flight && now_ - pr.sent_at > kProducerRetryMs) {
      pr.in_flight = 0;
      pr.maybe_written = true;
    }
    if (pr.in_flight || now_ < pr.next_send) continue;
    if (!faults_on_ && now_ > options_.duration_ms + kSettleMs / 2) continue;  // quiet before the final check
    int target = partition_.leader;
    if (target < 0 || rng_.chance(0.1)) target = static_cast<int>(rng_.range(0, options_.nodes - 1));
    pr.in_flight = next_id_++;
    pr.sent_at = now_;
    send(producer_endpoint(pr.id), target, ProduceReq{pr.id, record_of(pr), pr.in_flight});
  }
}

void SimCluster::crash(int n) {
  Node& node = nodes_[static_cast<size_t>(n)];
  node.alive = false;
  node.log.crash();
  node.replica.reset();
  node.produces.clear();
  node.impaired = true;
  node.restart_at = now_ + rng_.range(100, 800);
  ++stats_.crashes;
  log("node " + std::to_string(n) + " crashed, log kept to " + std::to_string(node.log.end_offset()));
}

void SimCluster::restart(int n) {
  Node& node = nodes_[static_cast<size_t>(n)];
  node.alive = true;
  ++node.incarnation;
  node.epochs = node.disk_epochs;
  node.replica = std::make_unique<Replica>(replica_config(n), node.log, node.epochs, node.disk_hw);
  node.request_sent = -1;
  node.next_request_at = now_;
  node.restart_at = -1;
  checker_.restarted(n);
  log("node " + std::to_string(n) + " restarted, log end " + std::to_string(node.log.end_offset()));
  drain(n);
}

void SimCluster::heal() {
  for (auto& row : cut_) std::fill(row.begin(), row.end(), false);
}

void SimCluster::faults() {
  const int n_nodes = options_.nodes;
  for (int n = 0; n < n_nodes; ++n) {
    Node& node = nodes_[static_cast<size_t>(n)];
    if (!node.alive && node.restart_at >= 0 && node.restart_at <= now_) restart(n);
  }
  if (!faults_on_) return;
  if (rng_.chance(0.04)) {
    const int n = static_cast<int>(rng_.range(0, n_nodes - 1));
    int impaired = 0;
    for (const auto& node : nodes_) impaired += node.impaired ? 1 : 0;
    Node& node = nodes_[static_cast<size_t>(n)];
    // Acknowledged data survives as many unclean losses as min.insync.replicas leaves spare.
    if (node.alive && (node.impaired || impaired < n_nodes - min_isr_)) crash(n);
  }
  if (rng_.chance(0.05)) {
    const int n = static_cast<int>(rng_.range(0, n_nodes - 1));
    const auto c = static_cast<size_t>(controller_endpoint());
    const auto un = static_cast<size_t>(n);
    switch (rng_.range(0, 3)) {
      case 0:  // cut from everyone
        for (size_t o = 0; o <= c; ++o) cut_[un][o] = cut_[o][un] = o != un;
        log("cut node " + std::to_string(n) + " from all");
        break;
      case 1:  // cut from the other brokers, not from the controller
        for (size_t o = 0; o < c; ++o) cut_[un][o] = cut_[o][un] = o != un;
        log("cut node " + std::to_string(n) + " from the brokers");
        break;
      case 2:  // cut from the controller only
        cut_[un][c] = cut_[c][un] = true;
        log("cut node " + std::to_string(n) + " from the controller");
        break;
      default: {  // one way
        const auto o = static_cast<size_t>(rng_.range(0, n_nodes));
        if (o != un) cut_[un][o] = true;
        log("cut " + std::to_string(n) + " -> " + std::to_string(o));
      }
    }
  }
  if (rng_.chance(0.1)) {
    heal();
    log("healed");
  }
  if (rng_.chance(0.03)) {  // a preferred-leader election (or a controlled shutdown's move)
    for (BrokerId b : partition_.isr) {
      if (b != partition_.leader && live_.is_live(b)) {
        controller_change(with_leader(partition_, b), "leader moved");
        break;
      }
    }
  }
  for (auto& node : nodes_) {
    if (!node.alive) continue;
    if (rng_.chance(0.3)) node.log.flush();
    if (rng_.chance(0.5)) node.disk_hw = node.replica->high_watermark();
  }
}

void SimCluster::observe_all() {
  for (int n = 0; n < options_.nodes; ++n) {
    Node& node = nodes_[static_cast<size_t>(n)];
    if (node.alive) checker_.observe(n, node.log, node.replica->high_watermark());
  }
  const int leader = partition_.leader;
  if (leader < 0) return;
  const Node& lead = nodes_[static_cast<size_t>(leader)];
  if (!lead.alive || !lead.replica->is_leader() || lead.replica->leader_epoch() != partition_.leader_epoch) return;
  for (BrokerId m : partition_.isr) {
    const Node& node = nodes_[static_cast<size_t>(m)];
    if (m != leader && node.alive && !node.impaired)
      checker_.isr_member(m, node.log.end_offset(), leader, lead.replica->high_watermark());
  }
}

bool SimCluster::run() {
  for (int n = 0; n < options_.nodes; ++n) send(controller_endpoint(), n, MetadataPush{partition_, known_incarnation_[static_cast<size_t>(n)]});
  const int64_t end = options_.duration_ms + kSettleMs;
  for (now_ = 0; now_ <= end; now_ += kTickMs) {
    while (!queue_.empty() && queue_.top().at <= now_) {
      Event e = queue_.top();
      queue_.pop();
      deliver(e);
    }
    tick_controller();
    tick_nodes();
    tick_producers();
    if (now_ % kFaultEveryMs == 0) faults();
    observe_all();
    if (!checker_.ok()) break;
    if (faults_on_ && now_ >= options_.duration_ms) {
      faults_on_ = false;
      heal();
      for (auto& node : nodes_)
        if (!node.alive) node.restart_at = now_;
      log("faults over: healing and settling");
    }
  }
  stats_.committed = static_cast<int64_t>(checker_.committed());
  if (!checker_.ok()) return false;
  std::vector<const SimLog*> logs;
  for (const auto& node : nodes_) logs.push_back(&node.log);
  const int leader = partition_.leader;
  const Node* lead = leader >= 0 ? &nodes_[static_cast<size_t>(leader)] : nullptr;
  const bool leading = lead && lead->alive && lead->replica->is_leader();
  checker_.settled(logs, leading ? leader : -1, leading ? lead->replica->high_watermark() : 0);
  return checker_.ok();
}

}  // namespace brokerd::replication::sim
