#pragma once
// A coordinator in memory for the tests: it drives the rules as the broker will (a cache of
// metadata, a __transaction_state log that is a vector, markers that are "sent" until the test
// says they are written) and records every transition it applies.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "brokerd/transactions/coordinator_rules.h"
#include "brokerd/transactions/states.h"
#include "brokerd/transactions/txn_log.h"

namespace brokerd::transactions::testing {

struct Answer {
  ErrorCode error = ErrorCode::none;
  ProducerIdAndEpoch ids;
};

struct Transition {
  std::string transactional_id;
  TxnState from;
  TxnState to;
};

class Driver {
 public:
  CoordinatorConfig config;
  std::map<std::string, TxnMetadata> cache;
  std::vector<TxnLogRecord> log;
  std::vector<MarkerPlan> markers;  // sent, not yet written
  std::vector<Transition> applied;
  ProducerId next_producer_id = 1000;
  int64_t now = 1'000'000;
  bool fail_next_write = false;
  // Set by a transition complete_transition refused (the property test's failure).
  std::optional<Transition> refused;

  AllocateProducerId allocator() {
    return [this] { return ProducerIdGrant{ErrorCode::none, next_producer_id++}; };
  }

  const TxnMetadata* find(const std::string& id) const {
    auto it = cache.find(id);
    return it == cache.end() ? nullptr : &it->second;
  }
  const TxnMetadata& at(const std::string& id) const { return cache.at(id); }

  Answer init(const std::string& id, int32_t timeout_ms = 60'000,
              std::optional<ProducerIdAndEpoch> expected = std::nullopt) {
    InitProducerIdRequest req{id, timeout_ms, expected};
    return apply(id, init_producer_id(find(id), req, now, config, allocator()));
  }

  Answer add(const std::string& id, ProducerIdAndEpoch p, std::vector<TopicPartition> parts,
             int16_t version = kTxnVersion0) {
    AddPartitionsRequest req{id, p.producer_id, p.epoch, std::move(parts), version};
    return apply(id, add_partitions(find(id), req, now));
  }

  Answer add_offsets_of(const std::string& id, ProducerIdAndEpoch p, int32_t offsets_partition) {
    return apply(id, add_offsets(find(id), id, p.producer_id, p.epoch, offsets_partition, now));
  }

  Answer end(const std::string& id, ProducerIdAndEpoch p, TxnResult r, int16_t version = kTxnVersion0) {
    EndTxnRequest req{id, p.producer_id, p.epoch, r, version};
    return apply(id, end_txn(find(id), req, now, allocator()));
  }

  // Every marker sent is written: the completions follow.
  void write_markers() {
    auto plans = std::move(markers);
    markers.clear();
    for (auto& plan : plans) finish(plan);
  }

  void abort_timed_out_transactions() {
    for (const auto& [id, md] : cache)
      if (timed_out(md, now)) pending_.push_back(id);
    auto ids = std::move(pending_);
    pending_.clear();
    for (const auto& id : ids) apply(id, transactions::abort_timed_out(at(id), at(id).producer_id, now));
  }

  void expire_ids() {
    std::vector<std::string> dead;
    for (auto& [id, md] : cache) {
      auto v = expire(md, now, config);
      if (!v) continue;
      begin_transition(md, *v);
      log.push_back(txn_tombstone(id));
      record(md, *v);
      dead.push_back(id);
    }
    for (const auto& id : dead) cache.erase(id);
  }

  // A new coordinator for the same partition: the log replayed, prepared transactions resumed.
  Driver failover() const {
    Driver next;
    next.config = config;
    next.log = log;
    next.now = now;
    next.next_producer_id = next_producer_id;
    next.cache = replay_txn_log(log);
    for (auto& plan : resume_after_load(next.cache, now)) {
      begin_transition(next.cache.at(plan.transactional_id), plan.complete);
      next.markers.push_back(std::move(plan));
    }
    return next;
  }

  Answer apply(const std::string& id, Decision d) {
    if (d.created) cache.emplace(id, *d.created);
    if (!d.write) return Answer{d.error, d.reply};
    TxnMetadata& md = cache.at(id);
    begin_transition(md, *d.write);
    if (fail_next_write) {
      fail_next_write = false;
      abandon_transition(md, *d.write, d.epoch_fence);
      return Answer{ErrorCode::not_enough_replicas, {}};
    }
    log.push_back(txn_record(id, *d.write, log_value_version(config.txn_version)));
    if (!record(md, *d.write)) return Answer{ErrorCode::unknown_server_error, {}};
    if (d.then == AfterWrite::reply) return Answer{ErrorCode::none, {d.write->producer_id, d.write->producer_epoch}};

    MarkerDecision m = markers_after_prepare(md, *d.write, now);
    if (!m.plan) return Answer{m.error, {}};
    begin_transition(md, m.plan->complete);
    markers.push_back(*m.plan);
    if (d.then == AfterWrite::fence_then_retry) return Answer{ErrorCode::concurrent_transactions, {}};
    return Answer{ErrorCode::none, m.plan->reply};
  }

 private:
  void finish(const MarkerPlan& plan) {
    auto it = cache.find(plan.transactional_id);
    if (it == cache.end()) return;
    log.push_back(txn_record(plan.transactional_id, plan.complete, log_value_version(config.txn_version)));
    record(it->second, plan.complete);
  }

  bool record(TxnMetadata& md, const TxnValue& next) {
    Transition t{md.transactional_id, md.state, next.state};
    bool ok = can_transition(t.from, t.to) && complete_transition(md, next);
    if (!ok) refused = t;
    EXPECT_TRUE(ok) << md.transactional_id << ": " << state_name(t.from) << " -> " << state_name(t.to) << "\n  "
                    << describe(md) << "\n  " << describe(next);
    applied.push_back(t);
    return ok;
  }

  static std::string describe(const TxnValue& v) {
    return "pid " + std::to_string(v.producer_id) + " epoch " + std::to_string(v.producer_epoch) + " next " +
           std::to_string(v.next_producer_id) + " state " + std::string(state_name(v.state)) + " partitions " +
           std::to_string(v.partitions.size()) + " timeout " + std::to_string(v.timeout_ms) + " start " +
           std::to_string(v.txn_start_ms) + " update " + std::to_string(v.last_update_ms) + " version " +
           std::to_string(v.client_txn_version);
  }

  std::vector<std::string> pending_;
};

inline ProducerIdAndEpoch ids(const Answer& a) { return a.ids; }

}  // namespace brokerd::transactions::testing
