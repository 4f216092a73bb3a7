// Produce: validates and appends each partition's batches on the partition's home shard.
// All appends are posted before the handler first suspends, which keeps per-partition
// order for pipelined requests (see net/request.h). With acks=all the answer then waits
// until every in-sync replica has the batch (or timeout_ms passes), as the partition's
// replication core decides.
#include <atomic>
#include <chrono>

#include "brokerd/common/clock.h"
#include "brokerd/net/run_on.h"
#include "brokerd/partitions/fan_out.h"
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/config/broker_config.h"
#include "brokerd/metrics/broker_metrics.h"
#include "brokerd/protocol/messages/produce_request.h"
#include "brokerd/protocol/messages/produce_response.h"
#include "kafka/authorize.h"
#include "kafka/quotas.h"
#include "kafka/handler.h"
#include "kafka/mirror_writes.h"
#include "kafka/txn_turns.h"
#include "brokerd/transactions/partition_verifier.h"
#include "brokerd/transactions/transaction_coordinator.h"
#include "brokerd/storage/record_batch.h"

namespace brokerd::kafka {
namespace {

using protocol::ErrorCode;
using protocol::ProduceRequest;
using protocol::ProduceResponse;

constexpr int64_t kMaxTurnWaitMs = 30'000;

// What the first step leaves for a batch that must be verified before it is appended.
struct PendingVerification {
  uint64_t guard = 0;
  TxnTurn turn;
};

struct Outcome {
  ErrorCode error = ErrorCode::none;
  std::string message;
  std::vector<storage::RecordError> record_errors;  // the records that failed the batch (v8+)
  int64_t base_offset = -1;
  int64_t log_append_time = -1;
  int64_t log_start_offset = -1;
  uint64_t bytes_written = 0;  // 0 for an idempotent retry, which writes nothing
  int64_t records_written = 0;
  bool flush_due = false;  // flush.messages reached: answered once synced
  // Set when the batch waits for the coordinator's verification before it is appended.
  std::optional<PendingVerification> verification;
};

// The request frame is owned by this request alone, so its batches may be rewritten in
// place (offsets, leader epoch) before they are written: no copy on the produce path.
std::span<std::byte> writable(const SharedBytes& b) {
  return {const_cast<std::byte*>(b.data.data()), b.data.size()};
}

// How a partition's transactional batch may be appended (KIP-890 part 1).
struct TxnPlan {
  enum class Kind : uint8_t { none, unverified, verify } kind = Kind::none;
  int64_t producer_id = -1;
  int16_t epoch = -1;
  int32_t base_sequence = -1;
};

// One partition's append on its home shard.
struct ShardAppend {
  partitions::PartitionManager* pm;
  partitions::TopicPartition tp;
  std::span<std::byte> data;
  int64_t pid_expiration_ms;
  int64_t pid_check_interval_ms;
  int16_t acks;
  std::shared_ptr<partitions::AckSlot> slot;
  int64_t deadline_ms;
  TxnPlan txn;

  // The checks before anything is written: the partition, or the error in `r`.
  partitions::Partition* checked(Outcome& r) const {
    partitions::Partition* p = pm->leading(tp);
    if (!p) {
      r.error = pm->not_served(tp);
      return nullptr;
    }
    if (auto refusal = refuse_mirror_write(tp.topic, p->mirror_link)) {
      r.error = refusal->error;
      r.message = std::move(refusal->message);
      return nullptr;
    }
    // NOT_ENOUGH_REPLICAS before anything is written.
    if (auto e = p->replica().check_append(acks); e != ErrorCode::none) {
      r.error = e;
      return nullptr;
    }
    return p;
  }

  // Posted in request order before the handler first suspends: appends at once, unless the
  // batch may open a transaction and must be verified first (then it takes a turn).
  Outcome first_step() const {
    Outcome r;
    partitions::Partition* p = checked(r);
    if (!p) return r;
    if (txn.kind == TxnPlan::Kind::verify) {
      const bool queued = txn_turns_waiting(tp.topic, tp.partition, txn.producer_id);
      if (queued || !p->has_ongoing_transaction(txn.producer_id, txn.epoch)) {
        r.verification = PendingVerification{p->start_verification(txn.producer_id, txn.epoch, txn.base_sequence),
                                             take_txn_turn(pm->executor_of(tp), tp.topic, tp.partition, txn.producer_id)};
        return r;
      }
      // It continues the producer's open transaction here: nothing to verify.
      return append(*p, storage::TxnAppendMode::verified(0));
    }
    return append(*p, txn.kind == TxnPlan::Kind::unverified ? storage::TxnAppendMode::unverified()
                                                            : storage::TxnAppendMode::not_allowed());
  }

  // After the coordinator answered `verified` for this partition: the append, in its turn.
  boost::asio::awaitable<Outcome> verified_step(PendingVerification pending, ErrorCode verified) const {
    co_await await_txn_turn(pending.turn, kMaxTurnWaitMs);
    Outcome r;
    partitions::Partition* p = verified == ErrorCode::none ? checked(r) : nullptr;
    if (verified != ErrorCode::none) r.error = verified;
    if (p) r = append(*p, storage::TxnAppendMode::verified(pending.guard));
    end_txn_turn(pending.turn, tp.topic, tp.partition, txn.producer_id);
    co_return r;
  }

  Outcome append(partitions::Partition& part, storage::TxnAppendMode mode) const {
    Outcome r;
    partitions::Partition* p = &part;
    int64_t now = wall_clock_ms();
    p->expire_producers(now, pid_expiration_ms, pid_check_interval_ms);
    // Idempotent producers: a retried batch answers with its original offsets (no error); a
    // gap is OUT_OF_ORDER_SEQUENCE_NUMBER and a stale epoch INVALID_PRODUCER_EPOCH, as Kafka
    // answers them. One batch per partition (Produce v3+), checked by the log.
    auto res = p->append(data, now, storage::AppendOrigin::client, mode);
    r.error = res.error;
    r.message = std::move(res.message);
    r.record_errors = std::move(res.record_errors);
    r.base_offset = res.base_offset;
    r.log_append_time = res.log_append_time;
    r.log_start_offset = res.log_start_offset;
    if (res.error == ErrorCode::none && !res.duplicate) {
      r.bytes_written = data.size();
      r.records_written = res.record_count;
      r.flush_due = p->flush_messages_due();
    }
    // A retry found in the log waits like the original: its answer must also mean "replicated".
    if (slot && res.error == ErrorCode::none) {
      p->await_replication(pm->next_ack_id(), res.last_offset, deadline_ms, slot, now);
      pm->after_replica_input(tp, *p);
    }
    return r;
  }
};

// The transactional fields of a partition's (single) batch, if it is transactional.
std::optional<TxnPlan> transactional_batch(std::span<const std::byte> data) {
  if (data.size() < storage::batch_layout::header_size) return std::nullopt;
  storage::RecordBatchView b(data);
  if (!b.is_transactional() || b.is_control()) return std::nullopt;
  TxnPlan plan;
  plan.producer_id = b.producer_id();
  plan.epoch = b.producer_epoch();
  plan.base_sequence = b.base_sequence();
  return plan;
}

}  // namespace

boost::asio::awaitable<net::Response> handle_produce(HandlerContext& ctx) {
  auto req = ctx.decode<ProduceRequest>();
  // producer_byte_rate: the request's size counts against the client's bucket as it arrives,
  // and a client over its quota waits: its connection is muted before the next request is
  // read (KIP-219; the answer says how long), and before v6 the answer itself waits.
  const int64_t throttle_ms =
      record_quota(ctx, quota::kProducerByteRate, static_cast<double>(ctx.request.frame.size()));
  mute(ctx, throttle_ms);
  auto& svc = ctx.services;
  auto image = svc.metadata.image();
  const bool acks_valid = req.acks == 0 || req.acks == 1 || req.acks == -1;
  const int64_t pid_expiration_ms = svc.config.integer("producer.id.expiration.ms");
  const int64_t pid_check_interval_ms = svc.config.integer("producer.id.expiration.check.interval.ms");
  const int16_t acks = req.acks;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(req.timeout_ms, 0));
  const int64_t deadline_ms = wall_clock_ms() + std::max(req.timeout_ms, 0);
  // acks=all: one slot per appended partition, all woken through one waiter.
  std::shared_ptr<partitions::FetchWaiter> waiter;
  std::vector<std::shared_ptr<partitions::AckSlot>> slots;
  if (acks == -1) waiter = svc.partitions.purgatory().waiter(co_await boost::asio::this_coro::executor);

  // One slot per partition in request order; a task for each partition that can be appended.
  std::vector<Outcome> outcomes;
  std::vector<size_t> task_slot;
  std::vector<partitions::FanOutTask<Outcome>> tasks;
  std::vector<ShardAppend> appends;  // one per task
  // Authorization: WRITE on the transactional id when there is one, WRITE on each topic.
  const bool verify_partitions = svc.transactions.settings().verify_partitions;
  const bool transaction_ok = !req.transactional_id ||
                              authorized(ctx, acl::Operation::write, acl::ResourceType::transactional_id, *req.transactional_id);
  for (auto& topic : req.topic_data) {
    // v13 names topics by id (KIP-516); the name is filled in here for everything below.
    const metadata::TopicMetadata* meta = ctx.version >= 13 ? image->topic(topic.topic_id) : image->topic(topic.name);
    if (ctx.version >= 13) topic.name = meta ? meta->name : std::string();
    const bool topic_ok = meta || ctx.version < 13 ? authorized_topic(ctx, acl::Operation::write, topic.name) : true;
    for (auto& part : topic.partition_data) {
      Outcome o;
      if (!transaction_ok) {
        o.error = ErrorCode::transactional_id_authorization_failed;
      } else if (!topic_ok) {
        o.error = ErrorCode::topic_authorization_failed;
      } else if (!acks_valid) {
        o.error = ErrorCode::invalid_required_acks;
      } else if (!meta && ctx.version >= 13) {
        o.error = ErrorCode::unknown_topic_id;
      } else if (!meta || part.index < 0 || part.index >= meta->partition_count()) {
        o.error = ErrorCode::unknown_topic_or_partition;
      } else if (metadata::is_internal_topic(topic.name)) {
        // Only the node writes its own topics: a record in __consumer_offsets would be taken
        // for a group's commit at the next load. Kafka refuses super users too.
        o.error = ErrorCode::invalid_topic_exception;
        o.message = "Cannot append to internal topic " + topic.name;
      } else if (part.records.is_null || part.records.parts.size() != 1 ||
                 !std::holds_alternative<SharedBytes>(part.records.parts[0]) || part.records.size() == 0) {
        o.error = ErrorCode::corrupt_message;
        o.message = "the partition carries no record batches";
      } else {
        partitions::TopicPartition tp{topic.name, part.index};
        auto data = writable(std::get<SharedBytes>(part.records.parts[0]));
        auto* pm = &svc.partitions;
        // A transactional batch needs the request's transactional id; with it, the batch may
        // open a transaction once the coordinator says the partition is in it.
        TxnPlan txn;
        if (req.transactional_id) {
          if (auto plan = transactional_batch(data)) {
            txn = *plan;
            // Produce v12 (transaction.version 2) adds the partition to the transaction itself,
            // verification or not.
            txn.kind = verify_partitions || ctx.version >= 12 ? TxnPlan::Kind::verify : TxnPlan::Kind::unverified;
          }
        }
        task_slot.push_back(outcomes.size());
        std::shared_ptr<partitions::AckSlot> slot;
        if (acks == -1) {
          slot = std::make_shared<partitions::AckSlot>();
          slot->waiter = waiter;
        }
        slots.push_back(slot);
        ShardAppend a{pm, tp, data, pid_expiration_ms, pid_check_interval_ms, acks, slot, deadline_ms, txn};
        appends.push_back(a);
        tasks.push_back({pm->executor_of(tp), [a]() -> Outcome { return a.first_step(); }});
      }
      outcomes.push_back(std::move(o));
    }
  }

  auto results = co_await partitions::fan_out(std::move(tasks));
  for (size_t i = 0; i < results.size(); ++i) outcomes[task_slot[i]] = std::move(results[i]);
  // KIP-890: the batches that would open a transaction are appended once the coordinator says
  // their partitions are in the producer's transaction.
  {
    std::vector<size_t> waiting;  // indexes into appends/task_slot
    std::vector<transactions::TopicPartition> asked;
    for (size_t i = 0; i < appends.size(); ++i) {
      if (!outcomes[task_slot[i]].verification) continue;
      waiting.push_back(i);
      asked.push_back({appends[i].tp.topic, appends[i].tp.partition});
    }
    if (!waiting.empty()) {
      const TxnPlan& plan = appends[waiting.front()].txn;
      const auto check = ctx.version >= 12 ? transactions::PartitionVerifier::Check::add
                                           : transactions::PartitionVerifier::Check::verify;
      auto answers =
          co_await svc.txn_verifier.verify(*req.transactional_id, plan.producer_id, plan.epoch, asked, check);
      for (size_t k = 0; k < waiting.size(); ++k) {
        const size_t i = waiting[k];
        ErrorCode verified = k < answers.size() ? answers[k].second : ErrorCode::not_enough_replicas;
        // Clients before Produce v11 do not know TRANSACTION_ABORTABLE (Kafka's mapping).
        if (verified == ErrorCode::transaction_abortable && ctx.version < 11) verified = ErrorCode::invalid_txn_state;
        PendingVerification pending = std::move(*outcomes[task_slot[i]].verification);
        const ShardAppend& a = appends[i];
        auto step = [a, pending = std::move(pending), verified]() { return a.verified_step(pending, verified); };
        outcomes[task_slot[i]] = co_await net::run_on(a.pm->executor_of(a.tp), std::move(step));
      }
    }
  }
  // flush.messages: the partitions that reached it are synced before the answer.
  {
    size_t slot = 0;
    for (const auto& topic : req.topic_data) {
      for (const auto& part : topic.partition_data) {
        Outcome& o = outcomes[slot++];
        if (!o.flush_due) continue;
        const partitions::TopicPartition tp{topic.name, part.index};  // named: see net/run_on.h on GCC 12
        const ErrorCode e = co_await svc.partitions.flush_if_due(tp);
        if (e != ErrorCode::none) {
          o.error = e;
          o.base_offset = -1;
        }
      }
    }
  }
  if (waiter) {
    // Only the appended partitions wait; a refused one (not the leader, too few in sync) has
    // its answer already.
    for (size_t i = 0; i < slots.size(); ++i)
      if (outcomes[task_slot[i]].error != ErrorCode::none) slots[i].reset();
    auto all_done = [&] {
      return std::all_of(slots.begin(), slots.end(), [](const auto& s) { return !s || s->done.load(); });
    };
    while (true) {
      waiter->reset();
      if (all_done() || std::chrono::steady_clock::now() >= deadline || svc.partitions.purgatory().stopped()) break;
      co_await waiter->wait_until(deadline);
    }
    for (size_t i = 0; i < slots.size(); ++i) {
      Outcome& o = outcomes[task_slot[i]];
      if (!slots[i] || o.error != ErrorCode::none) continue;
      // Not replicated in time (or the node is stopping): the write may still commit, but
      // the producer must not take it as acknowledged.
      const auto code = slots[i]->done ? static_cast<ErrorCode>(slots[i]->error.load()) : ErrorCode::request_timed_out;
      if (code != ErrorCode::none) {
        o.error = code;
        o.base_offset = -1;
      }
    }
  }

  bool any_error = false;
  uint64_t request_bytes = 0;
  ProduceResponse resp;
  size_t slot = 0;
  for (const auto& topic : req.topic_data) {
    ProduceResponse::TopicProduceResponse tr;
    tr.name = topic.name;
    tr.topic_id = topic.topic_id;
    uint64_t topic_bytes = 0;
    int64_t topic_records = 0;
    for (const auto& part : topic.partition_data) {
      const Outcome& o = outcomes[slot++];
      topic_bytes += o.bytes_written;
      topic_records += o.records_written;
      ProduceResponse::PartitionProduceResponse pr;
      pr.index = part.index;
      pr.error_code = protocol::code(o.error);
      pr.base_offset = o.base_offset;
      pr.log_append_time_ms = o.log_append_time;
      pr.log_start_offset = o.log_start_offset;
      if (o.error != ErrorCode::none) {
        any_error = true;
        if (!o.message.empty()) pr.error_message = o.message;
        // KIP-467: name the records, so that the client fails them alone with this error and
        // the batch's others with its own "another record failed" error.
        for (const auto& re : o.record_errors) {
          protocol::produce_response_types::BatchIndexAndErrorMessage e;
          e.batch_index = re.index;
          e.batch_index_error_message = re.message;
          pr.record_errors.push_back(std::move(e));
        }
      }
      tr.partition_responses.push_back(std::move(pr));
    }
    request_bytes += topic_bytes;
    if (topic_bytes > 0) {
      // One lookup per topic and request, in this shard's own map: no lock, no allocation.
      auto& row = svc.metrics.topics().row(topic.name);
      row.add(metrics::BrokerMetrics::bytes_in, topic_bytes);
      row.add(metrics::BrokerMetrics::records_in, static_cast<uint64_t>(topic_records));
    }
    resp.responses.push_back(std::move(tr));
  }
  if (any_error) svc.metrics.api(ctx.request.api_key).errors.add();
  resp.throttle_time_ms = static_cast<int32_t>(throttle_ms);
  if (ctx.request.connection)
    svc.metrics.principal_traffic(ctx.request.connection->principal, metrics::BrokerMetrics::principal_bytes_in,
                                  request_bytes, throttle_ms);
  co_await answer_later(ctx, req.acks == 0 ? 0 : throttle_ms, 6);
  if (req.acks == 0) {
    // No response is expected; closing the connection is the only way to report a failure.
    co_return net::Response{{}, false, any_error};
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
