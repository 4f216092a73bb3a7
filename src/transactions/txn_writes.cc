// How a decision of the rules becomes durable: begun and appended on the id's home shard,
// replicated to the in-sync replicas, applied, answered; a prepared transaction's markers sent
// and its completion written once every partition has its marker.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/net/run_on.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/storage/batch_builder.h"
#include "brokerd/transactions/marker_sender.h"
#include "brokerd/transactions/states.h"
#include "brokerd/transactions/transaction_coordinator.h"
#include "transactions/txn_slot.h"

namespace brokerd::transactions {

int16_t TransactionCoordinator::value_version() const {
  return log_value_version(settings_.finalized_txn_version ? settings_.finalized_txn_version() : settings_.rules.txn_version);
}

ErrorCode log_write_error(ErrorCode e) {
  switch (e) {
    case ErrorCode::none:
      return e;
    case ErrorCode::unknown_topic_or_partition:
    case ErrorCode::not_enough_replicas:
    case ErrorCode::not_enough_replicas_after_append:
    case ErrorCode::request_timed_out:
      return ErrorCode::coordinator_not_available;
    case ErrorCode::not_leader_or_follower:
    case ErrorCode::kafka_storage_error:
      return ErrorCode::not_coordinator;
    default:
      return ErrorCode::unknown_server_error;
  }
}

std::pair<ErrorCode, int64_t> TransactionCoordinator::append(Slot& slot, const TxnLogRecord& record) {
  partitions::Partition* part = partitions_.leading(slot.tp);
  if (!part) return {ErrorCode::not_leader_or_follower, -1};
  // The log's own writes are acks=all: refused while the ISR is below its minimum.
  if (auto e = part->replica().check_append(-1); e != ErrorCode::none) return {e, -1};
  const int64_t now = wall_clock_ms();
  storage::BatchBuilder builder;
  std::optional<std::span<const std::byte>> value;
  if (record.value) value = std::span<const std::byte>(*record.value);
  builder.add(now, std::span<const std::byte>(record.key), value);
  Bytes batch = builder.build();
  auto res = part->append(batch, now, storage::AppendOrigin::coordinator);
  return {res.error, res.last_offset};
}

TransactionCoordinator::Started TransactionCoordinator::start_write(Slot& slot, const std::string& id, Decision d) {
  Started st;
  st.term = slot.term;
  if (d.error != ErrorCode::none || !d.writes()) {
    st.answer = {d.error, d.reply};
    return st;
  }
  if (d.created) slot.ids.try_emplace(id, *d.created);
  TxnMetadata& md = slot.ids.at(id);
  begin_transition(md, *d.write);
  std::pair<ErrorCode, int64_t> appended;
  try {
    appended = append(slot, txn_record(id, *d.write, value_version()));
  } catch (const std::exception& e) {
    module_logger("transactions")->error("{}: cannot write the transition of {}: {}", slot.tp.dir_name(), id, e.what());
    appended = {ErrorCode::unknown_server_error, -1};
  }
  if (appended.first != ErrorCode::none) {
    abandon_transition(md, *d.write, d.epoch_fence);
    if (d.created) slot.ids.erase(id);
    st.answer.error = log_write_error(appended.first);
    return st;
  }
  st.offset = appended.second;
  st.write = std::move(d);
  return st;
}

boost::asio::awaitable<TxnAnswer> TransactionCoordinator::run(const std::string& id, Decide decide, int64_t wait_ms) {
  const int32_t p = partition_for(id);
  Slot& slot = *slots_[p];
  // A request that meets a transition in flight (most often the markers of the id's previous
  // transaction) waits for it, up to kConcurrentWaitMs, before it answers
  // CONCURRENT_TRANSACTIONS: a client told to retry may meanwhile give up on what it was doing
  // (librdkafka aborting a transaction whose AddPartitionsToTxn was told to retry sends an
  // EndTxn the coordinator can only refuse).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  uint64_t seen = 0;
  auto start = [this, s = &slot, &id, &decide, &seen]() -> Started {
    Started st;
    if (!s->led) {
      st.answer.error = ErrorCode::not_coordinator;
    } else if (!s->loaded) {
      st.answer.error = ErrorCode::coordinator_load_in_progress;
    } else {
      auto it = s->ids.find(id);
      seen = s->changes;
      st = start_write(*s, id, decide(it == s->ids.end() ? nullptr : &it->second));
    }
    return st;
  };
  for (;;) {
    Started st = co_await net::run_on(slot.executor, start);
    if (st.write) co_return co_await finish_write(p, id, std::move(*st.write), st.offset, st.term);
    if (st.answer.error != ErrorCode::concurrent_transactions || std::chrono::steady_clock::now() >= deadline)
      co_return st.answer;
    auto wait = [s = &slot, &seen, deadline]() -> boost::asio::awaitable<int> {
      if (s->changes == seen) {
        s->bell->expires_at(deadline);
        co_await s->bell->async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
      }
      co_return 0;
    };
    co_await net::run_on(slot.executor, std::move(wait));
  }
}

boost::asio::awaitable<TxnAnswer> TransactionCoordinator::finish_write(int32_t p, std::string id, Decision d,
                                                                       int64_t offset, uint64_t term) {
  Slot& slot = *slots_[p];
  const ErrorCode replicated = co_await partitions_.await_replicated(slot.tp, offset, settings_.write_timeout_ms);
  auto apply = [this, s = &slot, p, &id, &d, replicated, term]() -> TxnAnswer {
    if (s->term != term) return {ErrorCode::not_coordinator, {}};
    auto it = s->ids.find(id);
    if (it == s->ids.end()) return {ErrorCode::not_coordinator, {}};
    TxnMetadata& md = it->second;
    s->changed();
    if (replicated != ErrorCode::none) {
      abandon_transition(md, *d.write, d.epoch_fence);
      return {log_write_error(replicated), {}};
    }
    const bool was_ongoing = md.state == TxnState::ongoing;
    if (!complete_transition(md, *d.write)) {
      module_logger("transactions")->error("{}: the written transition of {} to {} does not follow from {}",
                                           s->tp.dir_name(), id, state_name(d.write->state), state_name(md.state));
      return {ErrorCode::unknown_server_error, {}};
    }
    if (const int delta = (md.state == TxnState::ongoing) - was_ongoing; delta != 0) {
      s->ongoing += delta;
      counts_.ongoing.fetch_add(delta);
    }
    if (d.then == AfterWrite::reply) return {ErrorCode::none, {d.write->producer_id, d.write->producer_epoch}};
    MarkerDecision m = markers_after_prepare(md, *d.write, wall_clock_ms());
    if (m.error != ErrorCode::none || !m.plan) return {m.error, {}};
    begin_transition(md, m.plan->complete);
    TxnAnswer answer = d.then == AfterWrite::send_markers ? TxnAnswer{ErrorCode::none, m.plan->reply}
                                                          : TxnAnswer{ErrorCode::concurrent_transactions, {}};
    send_markers(p, term, std::move(*m.plan));
    return answer;
  };
  co_return co_await net::run_on(slot.executor, std::move(apply));
}

void TransactionCoordinator::send_markers(int32_t p, uint64_t term, MarkerPlan plan) {
  Slot& slot = *slots_[p];
  MarkerJob job;
  job.producer_id = plan.producer_id;
  job.producer_epoch = plan.producer_epoch;
  job.result = plan.result;
  job.coordinator_epoch = slot.coordinator_epoch;
  job.txn_version = plan.complete.client_txn_version;
  job.partitions = plan.partitions;
  job.done = [this, p, term, plan = std::move(plan)](ErrorCode e) mutable {
    if (stopping_) return;
    if (e != ErrorCode::none) {
      // A leader knows a newer coordinator (or producer epoch): this one is deposed, and the
      // id stays as it is until the partition moves (Kafka does the same).
      module_logger("transactions")
          ->warn("the markers of {} (producer {} epoch {}) were refused: {}; leaving the transaction to the newer "
                 "coordinator",
                 plan.transactional_id, plan.producer_id, plan.producer_epoch, protocol::error_name(e));
      return;
    }
    boost::asio::co_spawn(slots_[p]->executor, complete(p, term, std::move(plan)), boost::asio::detached);
  };
  markers_.send(std::move(job));
}

boost::asio::awaitable<void> TransactionCoordinator::complete(int32_t p, uint64_t term, MarkerPlan plan) {
  Slot& slot = *slots_[p];
  boost::asio::steady_timer pause(slot.executor);
  for (;;) {
    if (stopping_ || slot.term != term) co_return;
    auto it = slot.ids.find(plan.transactional_id);
    if (it == slot.ids.end() || it->second.pending_state != plan.complete.state) co_return;
    auto [error, offset] = append(slot, txn_record(plan.transactional_id, plan.complete, value_version()));
    if (error == ErrorCode::none) error = co_await partitions_.await_replicated(slot.tp, offset, settings_.write_timeout_ms);
    if (stopping_ || slot.term != term) co_return;
    it = slot.ids.find(plan.transactional_id);
    if (it == slot.ids.end()) co_return;
    slot.changed();
    if (error == ErrorCode::none) {
      if (complete_transition(it->second, plan.complete)) {
        (plan.result == TxnResult::commit ? counts_.committed : counts_.aborted).fetch_add(1);
      }
      co_return;
    }
    if (error == ErrorCode::not_leader_or_follower) co_return;  // the next coordinator completes it
    module_logger("transactions")
        ->warn("{}: writing the completion of {} failed ({}); trying again", slot.tp.dir_name(),
               plan.transactional_id, protocol::error_name(error));
    pause.expires_after(std::chrono::milliseconds(100));
    co_await pause.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  }
}

// ---- The client calls ------------------------------------------------------------------

boost::asio::awaitable<TxnAnswer> TransactionCoordinator::init_producer_id(InitProducerIdRequest req,
                                                                           ProducerId fresh_id) {
  const std::string id = req.transactional_id;
  auto decide = [this, req = std::move(req), fresh_id](const TxnMetadata* md) {
    bool used = false;
    AllocateProducerId allocate = [&]() -> ProducerIdGrant {
      if (used || fresh_id < 0) return {ErrorCode::coordinator_load_in_progress, kNoProducerId};
      used = true;
      return {ErrorCode::none, fresh_id};
    };
    return transactions::init_producer_id(md, req, wall_clock_ms(), settings_.rules, allocate);
  };
  co_return co_await run(id, std::move(decide));
}

boost::asio::awaitable<std::vector<std::pair<TopicPartition, ErrorCode>>> TransactionCoordinator::add_partitions(
    AddPartitionsRequest req, bool from_broker) {
  const std::string id = req.transactional_id;
  std::vector<TopicPartition> named = req.partitions;
  auto decide = [req = std::move(req)](const TxnMetadata* md) {
    return transactions::add_partitions(md, req, wall_clock_ms());
  };
  TxnAnswer a = co_await run(id, std::move(decide), from_broker ? 0 : kConcurrentWaitMs);
  std::vector<std::pair<TopicPartition, ErrorCode>> out;
  for (auto& tp : named) out.emplace_back(std::move(tp), a.error);
  co_return out;
}

boost::asio::awaitable<TxnAnswer> TransactionCoordinator::add_offsets(std::string transactional_id,
                                                                      ProducerId producer_id, ProducerEpoch epoch,
                                                                      int32_t offsets_partition, int16_t txn_version) {
  auto decide = [=](const TxnMetadata* md) {
    return transactions::add_offsets(md, transactional_id, producer_id, epoch, offsets_partition, wall_clock_ms(),
                                     txn_version);
  };
  co_return co_await run(transactional_id, std::move(decide));
}

boost::asio::awaitable<TxnAnswer> TransactionCoordinator::end_txn(EndTxnRequest req, ProducerId fresh_id) {
  const std::string id = req.transactional_id;
  auto decide = [req = std::move(req), fresh_id](const TxnMetadata* md) {
    // Only a transaction.version 2 producer at the end of its epochs needs a new id: the caller
    // brought one when the request's epoch said so (else the producer retries).
    bool used = false;
    AllocateProducerId allocate = [&]() -> ProducerIdGrant {
      if (used || fresh_id < 0) return {ErrorCode::concurrent_transactions, kNoProducerId};
      used = true;
      return {ErrorCode::none, fresh_id};
    };
    return transactions::end_txn(md, req, wall_clock_ms(), allocate);
  };
  co_return co_await run(id, std::move(decide));
}

}  // namespace brokerd::transactions
