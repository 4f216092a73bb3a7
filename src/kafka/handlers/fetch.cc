// Fetch: reads file slices from each partition's log on its home shard (no copies: the
// response is sent with sendfile), and parks in the purgatory until min_bytes have
// arrived or max_wait_ms has passed. Consumers read up to the high watermark, or with
// isolation_level 1 (read_committed) up to the last stable offset, told of the aborted
// transactions among what they read; a follower (replica id >= 0) reads up to the log end,
// and its fetch offset tells the leader how far it has replicated. With a fetch session (KIP-227, kafka/fetch_sessions.h) the request
// names only what changed and the answer only partitions with news.
//
// Fetch from the nearest replica (KIP-392): a consumer that names its rack (v11+) is pointed
// by the leader to an in-sync follower in that rack when replica.selector.class asks for it,
// and any replica serves such consumers up to its own high watermark.
#include <chrono>

#include "brokerd/partitions/fan_out.h"
#include "brokerd/partitions/fetch_waiter.h"
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/common/clock.h"
#include "brokerd/config/broker_config.h"
#include "brokerd/kafka/fetch_sessions.h"
#include "brokerd/metrics/broker_metrics.h"
#include "brokerd/protocol/messages/fetch_request.h"
#include "brokerd/protocol/messages/fetch_response.h"
#include "brokerd/replication/read_replica.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"
#include "kafka/quotas.h"

namespace brokerd::kafka {
namespace {

using protocol::ErrorCode;
using protocol::FetchRequest;
using protocol::FetchResponse;
using Clock = std::chrono::steady_clock;

struct Wanted {
  partitions::TopicPartition tp;
  int64_t offset;
  int32_t max_bytes;
  ErrorCode error = ErrorCode::none;  // set when the partition cannot be read at all
  int32_t replica = -1;               // the follower fetching, or -1 for a consumer
  int32_t current_leader_epoch = -1;
  int64_t replica_log_start = -1;  // the follower's log start
  int64_t replica_epoch = -1;      // the follower's broker epoch (KIP-903), -1 if not known
  bool min_one_batch = true;  // the first batch whole even when larger than max_bytes
  bool read_committed = false;  // a consumer at isolation_level 1
};

struct ReadOutcome {
  ErrorCode error = ErrorCode::none;
  protocol::Records records = protocol::Records::empty();
  int64_t high_watermark = -1;
  int64_t last_stable_offset = -1;
  int64_t log_start_offset = -1;
  int32_t preferred_read_replica = -1;  // read there instead (KIP-392)
  std::vector<storage::AbortedTxn> aborted;  // read_committed: those overlapping the records read
};

// How far a consumer reads: the high watermark, or the last stable offset for read_committed.
int64_t consumer_bound(const partitions::Partition& p, const Wanted& w) {
  return w.read_committed ? p.last_stable_offset() : p.high_watermark();
}

// A consumer's read below its bound, with the aborted transactions a read_committed consumer
// must skip: those overlapping [fetch offset, one past the last batch read) (Kafka's rule).
void read_for_consumer(const partitions::Partition& p, const Wanted& w, int64_t bound, ReadOutcome& out) {
  auto rr = p.log().read(w.offset, std::max(w.max_bytes, 1), w.min_one_batch, bound);
  out.error = rr.error;
  out.records = std::move(rr.records);
  if (w.read_committed && rr.error == ErrorCode::none && rr.next_offset > w.offset)
    out.aborted = p.aborted_transactions(w.offset, rr.next_offset);
}

// What the whole request says about where a consumer may read.
struct ReadPolicy {
  bool any_replica = false;   // v11+ consumer: followers serve it too
  bool rack_aware = false;    // replica.selector.class is the rack-aware one
  std::string client_rack;
  int32_t node_id = -1;
  std::shared_ptr<const metadata::MetadataImage> image;  // the brokers' racks
};

std::string_view rack_of(const metadata::MetadataImage& image, int32_t broker) {
  const auto* b = image.broker(broker);
  return b ? std::string_view(b->rack) : std::string_view();
}

// The leader's KIP-392 choice for a consumer at `offset`: another replica's id, or -1.
int32_t preferred_replica(const ReadPolicy& policy, partitions::Partition& p, int64_t offset) {
  if (!policy.rack_aware || policy.client_rack.empty()) return -1;
  const auto holding = p.replica().followers_holding(offset);
  if (holding.empty()) return -1;
  std::vector<replication::ReadCandidate> candidates;
  for (const auto& [id, end] : holding) candidates.push_back({id, end, rack_of(*policy.image, id)});
  const int32_t chosen = replication::choose_read_replica(policy.client_rack, policy.node_id,
                                                          rack_of(*policy.image, policy.node_id), candidates);
  return chosen == policy.node_id ? -1 : chosen;
}

// A consumer reading from a follower: the epoch it names must be the follower's, and it reads
// up to the follower's high watermark. Past the follower's end, a consumer that names an
// epoch is told OFFSET_OUT_OF_RANGE (it asks the leader); one that does not gets an empty
// answer, as it may have followed stale metadata here and will refresh it.
ReadOutcome read_at_follower(partitions::Partition& p, const Wanted& w) {
  ReadOutcome out;
  if (w.current_leader_epoch >= 0 && w.current_leader_epoch < p.leader_epoch()) {
    out.error = ErrorCode::fenced_leader_epoch;
    return out;
  }
  if (w.current_leader_epoch > p.leader_epoch()) {
    out.error = ErrorCode::unknown_leader_epoch;
    return out;
  }
  auto& log = p.log();
  out.high_watermark = p.high_watermark();
  out.last_stable_offset = p.last_stable_offset();
  out.log_start_offset = log.log_start_offset();
  if (w.offset < out.log_start_offset || (w.offset > log.log_end_offset() && w.current_leader_epoch >= 0)) {
    out.error = ErrorCode::offset_out_of_range;
    return out;
  }
  const int64_t bound = consumer_bound(p, w);
  if (w.offset >= bound) return out;
  read_for_consumer(p, w, bound, out);
  return out;
}

// A follower's fetch: the replication core checks it and learns the follower's end.
ReadOutcome read_for_follower(partitions::PartitionManager& pm, const Wanted& w) {
  ReadOutcome out;
  partitions::Partition* p = pm.local(w.tp);
  if (!p) {
    out.error = pm.not_served(w.tp);
    return out;
  }
  const int64_t now = wall_clock_ms();
  auto d = p->replica().handle_fetch({w.replica, w.current_leader_epoch, w.offset, w.replica_log_start, w.replica_epoch},
                                     now);
  pm.after_replica_input(w.tp, *p);
  out.error = d.error;
  out.high_watermark = d.high_watermark;
  out.last_stable_offset = p->last_stable_offset();
  out.log_start_offset = d.log_start_offset;
  if (d.error != ErrorCode::none) return out;
  auto& log = p->log();
  if (w.offset == log.log_end_offset()) return out;
  // A throttled copy (partitions/replication_throttle.h) gets nothing while the rate is spent.
  const bool throttled = p->leader_throttled && !p->in_isr(w.replica);
  if (throttled && pm.leader_quota().exceeded(now)) return out;
  auto rr = log.read(w.offset, std::max(w.max_bytes, 1), w.min_one_batch, log.log_end_offset());
  out.error = rr.error;
  out.records = std::move(rr.records);
  if (throttled) pm.leader_quota().record(out.records.size(), now);
  return out;
}

// The partition a consumer's fetch may read on this node: the leader's, or (v11+) a
// follower's that has a leader to follow.
partitions::Partition* readable(partitions::PartitionManager& pm, const ReadPolicy& policy, const partitions::TopicPartition& tp) {
  if (!policy.any_replica) return pm.leading(tp);
  partitions::Partition* p = pm.local(tp);
  if (!p || p->is_leader()) return p;
  return p->leader() >= 0 && p->leader() != policy.node_id ? p : nullptr;
}

ReadOutcome read_partition(partitions::PartitionManager& pm, const ReadPolicy& policy, const Wanted& w) {
  if (w.replica >= 0) return read_for_follower(pm, w);
  ReadOutcome out;
  partitions::Partition* p = readable(pm, policy, w.tp);
  if (!p) {
    out.error = pm.not_served(w.tp);
    return out;
  }
  if (!p->is_leader()) return read_at_follower(*p, w);
  auto& log = p->log();
  out.high_watermark = p->high_watermark();
  out.last_stable_offset = p->last_stable_offset();
  out.log_start_offset = log.log_start_offset();
  if (w.offset >= out.log_start_offset && w.offset <= log.log_end_offset()) {
    out.preferred_read_replica = preferred_replica(policy, *p, w.offset);
    if (out.preferred_read_replica >= 0) return out;
  }
  if (w.offset == out.high_watermark) return out;
  if (w.offset < out.log_start_offset || w.offset > log.log_end_offset()) {
    out.error = ErrorCode::offset_out_of_range;
    return out;
  }
  // read_committed between the last stable offset and the high watermark: nothing yet.
  const int64_t bound = consumer_bound(*p, w);
  if (w.offset >= bound) return out;
  read_for_consumer(*p, w, bound, out);
  return out;
}

// Kafka's response budget (KIP-74), over partitions in request order: the first non-empty one
// may pass max_bytes by its first batch, so that a consumer never stalls on a batch larger than
// its limits; every later one gets whole batches within both its partition_max_bytes and what
// the response has left. The reads ran in parallel with the first batch whole; this keeps what
// fits, empties what cannot, and returns the partitions to read again with a smaller limit and
// no first-batch exception (index, limit). Adds what it keeps to `total`.
std::vector<std::pair<size_t, int32_t>> fit_to_budget(const std::vector<Wanted>& wanted,
                                                      std::vector<ReadOutcome>& reads, int64_t max_bytes,
                                                      int64_t& total) {
  std::vector<std::pair<size_t, int32_t>> again;
  int64_t reserved = 0;  // the limits of the partitions read again
  for (size_t i = 0; i < wanted.size(); ++i) {
    auto& r = reads[i];
    const auto size = static_cast<int64_t>(r.records.size());
    if (size == 0) continue;
    if (total == 0 && reserved == 0) {
      total = size;  // the first non-empty partition: read within the limits, first batch whole
      continue;
    }
    const int64_t limit = std::min<int64_t>(std::max(wanted[i].max_bytes, 0), max_bytes - total - reserved);
    if (size <= limit) {
      total += size;
      continue;
    }
    r.records = protocol::Records::empty();
    if (limit > 0) {
      again.emplace_back(i, static_cast<int32_t>(limit));
      reserved += limit;
    }
  }
  return again;
}

// The request as the session cache sees it: partitions by the name or id the version uses.
FetchSessionRequest session_request(const FetchRequest& req, int16_t version, int32_t replica_id) {
  const bool ids = version >= 13;
  FetchSessionRequest r;
  r.session_id = version >= 7 ? req.session_id : 0;
  r.epoch = version >= 7 ? req.session_epoch : -1;
  r.replica_id = replica_id;
  r.topic_ids = ids;
  for (const auto& topic : req.topics) {
    for (const auto& part : topic.partitions) {
      SessionPartition p;
      p.key = {ids ? std::string() : topic.topic, ids ? topic.topic_id : protocol::Uuid{}, part.partition};
      p.fetch_offset = part.fetch_offset;
      p.max_bytes = part.partition_max_bytes;
      p.current_leader_epoch = part.current_leader_epoch;
      p.requester_log_start = part.log_start_offset;
      r.partitions.push_back(std::move(p));
    }
  }
  for (const auto& topic : req.forgotten_topics_data)
    for (int32_t partition : topic.partitions)
      r.forgotten.push_back({ids ? std::string() : topic.topic, ids ? topic.topic_id : protocol::Uuid{}, partition});
  return r;
}

}  // namespace

boost::asio::awaitable<net::Response> handle_fetch(HandlerContext& ctx) {
  auto req = ctx.decode<FetchRequest>();
  auto& svc = ctx.services;
  const int32_t replica_id = ctx.version >= 15 ? req.replica_state.replica_id : req.replica_id;
  if (replica_id >= 0 && ctx.request_time) ctx.request_time->exempt = true;  // replication

  FetchResponse resp;
  const auto session = svc.fetch_sessions.begin(session_request(req, ctx.version, replica_id), wall_clock_ms());
  resp.session_id = session.session_id;
  if (session.error != ErrorCode::none) {
    svc.metrics.api(ctx.request.api_key).errors.add();
    resp.error_code = protocol::code(session.error);
    co_return ctx.respond(resp);
  }

  // Authorization: a follower needs CLUSTER_ACTION on the cluster, a consumer READ on each topic.
  if (replica_id >= 0 && !authorized_cluster(ctx, acl::Operation::cluster_action)) {
    resp.error_code = protocol::code(ErrorCode::cluster_authorization_failed);
    co_return ctx.respond(resp);
  }
  auto image = svc.metadata.image();
  ReadPolicy policy;
  policy.any_replica = replica_id < 0 && ctx.version >= 11;
  if (policy.any_replica) {
    policy.rack_aware = svc.config.raw("replica.selector.class") == replication::kRackAwareReplicaSelector;
    policy.client_rack = req.rack_id;
    policy.node_id = svc.node_id;
    policy.image = image;
  }
  // The follower's broker epoch, which an ISR change it leads to carries (KIP-903): as it
  // says (v15+), else as this node's metadata has it.
  int64_t replica_epoch = -1;
  if (replica_id >= 0) {
    const auto* b = image->broker(replica_id);
    replica_epoch = ctx.version >= 15 && req.replica_state.replica_epoch >= 0 ? req.replica_state.replica_epoch
                    : b                                                      ? b->epoch
                                                                             : -1;
  }
  std::vector<Wanted> wanted;
  wanted.reserve(session.partitions.size());
  for (const auto& sp : session.partitions) {
    const auto& key = sp.key;
    const metadata::TopicMetadata* meta = ctx.version >= 13 ? image->topic(key.topic_id) : image->topic(key.topic);
    Wanted w{{meta ? meta->name : key.topic, key.partition}, sp.fetch_offset, sp.max_bytes};
    w.replica = replica_id >= 0 ? replica_id : -1;
    w.current_leader_epoch = sp.current_leader_epoch;
    w.replica_log_start = sp.requester_log_start;
    w.replica_epoch = replica_epoch;
    w.read_committed = replica_id < 0 && ctx.version >= 4 && req.isolation_level == 1;
    // A consumer is authorized before the topic is looked up, so that its answer does not
    // tell whether a topic it may not read exists; an unknown topic id names nothing to
    // authorize.
    if (replica_id < 0 && (meta || ctx.version < 13) && !authorized_topic(ctx, acl::Operation::read, w.tp.topic)) {
      w.error = ErrorCode::topic_authorization_failed;
    } else if (!meta) {
      w.error = ctx.version >= 13 ? ErrorCode::unknown_topic_id : ErrorCode::unknown_topic_or_partition;
    } else if (key.partition < 0 || key.partition >= meta->partition_count()) {
      w.error = ErrorCode::unknown_topic_or_partition;
    }
    wanted.push_back(std::move(w));
  }

  const auto deadline = Clock::now() + std::chrono::milliseconds(std::max(req.max_wait_ms, 0));
  const int64_t max_bytes = req.max_bytes > 0 ? req.max_bytes : INT32_MAX;
  std::vector<ReadOutcome> reads(wanted.size());
  std::shared_ptr<partitions::FetchWaiter> waiter;
  while (true) {
    std::vector<size_t> slots;
    std::vector<partitions::FanOutTask<ReadOutcome>> tasks;
    for (size_t i = 0; i < wanted.size(); ++i) {
      if (wanted[i].error != ErrorCode::none) continue;
      slots.push_back(i);
      Wanted w = wanted[i];
      w.max_bytes = static_cast<int32_t>(std::min<int64_t>(w.max_bytes, max_bytes));
      tasks.push_back({svc.partitions.executor_of(w.tp),
                       [pm = &svc.partitions, rp = &policy, w] { return read_partition(*pm, *rp, w); }});
    }
    auto results = co_await partitions::fan_out(std::move(tasks));
    for (size_t i = 0; i < results.size(); ++i) reads[slots[i]] = std::move(results[i]);

    int64_t total = 0;
    auto again = fit_to_budget(wanted, reads, max_bytes, total);
    if (!again.empty()) {
      std::vector<partitions::FanOutTask<ReadOutcome>> rereads;
      for (const auto& [i, limit] : again) {
        Wanted w = wanted[i];
        w.max_bytes = limit;
        w.min_one_batch = false;
        rereads.push_back({svc.partitions.executor_of(w.tp),
                           [pm = &svc.partitions, rp = &policy, w] { return read_partition(*pm, *rp, w); }});
      }
      auto second = co_await partitions::fan_out(std::move(rereads));
      for (size_t k = 0; k < second.size(); ++k) {
        total += static_cast<int64_t>(second[k].records.size());
        reads[again[k].first] = std::move(second[k]);
      }
    }
    // An error or a pointer to another replica is answered at once.
    bool answer_now = false;
    for (size_t i = 0; i < wanted.size(); ++i)
      answer_now = answer_now || wanted[i].error != ErrorCode::none || reads[i].error != ErrorCode::none ||
                   reads[i].preferred_read_replica >= 0;
    // A stopping node answers at once with what it has.
    if (total >= req.min_bytes || answer_now || Clock::now() >= deadline || svc.partitions.purgatory().stopped()) break;

    // Park until one of the partitions gets data, or the deadline.
    if (!waiter) waiter = svc.partitions.purgatory().waiter(co_await boost::asio::this_coro::executor);
    waiter->reset();
    std::vector<partitions::FanOutTask<bool>> watches;
    for (size_t i = 0; i < wanted.size(); ++i) {
      if (wanted[i].error != ErrorCode::none) continue;
      const bool follower = wanted[i].replica >= 0;
      // read_committed waits for the last stable offset to pass what it has seen.
      using Bound = partitions::Partition::ReadBound;
      const Bound bound = follower                   ? Bound::log_end
                          : wanted[i].read_committed ? Bound::last_stable
                                                     : Bound::high_watermark;
      const int64_t seen_bound = bound == Bound::last_stable ? reads[i].last_stable_offset : reads[i].high_watermark;
      auto seen = follower ? wanted[i].offset : std::max(seen_bound, wanted[i].offset);
      watches.push_back({svc.partitions.executor_of(wanted[i].tp),
                         [pm = &svc.partitions, rp = &policy, tp = wanted[i].tp, waiter, seen, follower, bound] {
                           auto* p = follower ? pm->leading(tp) : readable(*pm, *rp, tp);
                           if (p) p->watch(waiter, seen, bound);
                           return true;
                         }});
    }
    if (watches.empty()) break;
    co_await partitions::fan_out(std::move(watches));
    {
      metrics::GaugeHold parked(svc.metrics.fetch_purgatory());
      co_await waiter->wait_until(deadline);
    }
  }

  // With a session, what the answer includes (an incremental one: only partitions with news).
  std::vector<bool> include(wanted.size(), true);
  if (session.session_id != 0) {
    std::vector<PartitionAnswer> answers(wanted.size());
    for (size_t i = 0; i < wanted.size(); ++i) {
      const auto& r = reads[i];
      answers[i] = {r.records.size() > 0 || r.preferred_read_replica >= 0, wanted[i].error != ErrorCode::none ? wanted[i].error : r.error,
                    r.high_watermark, r.last_stable_offset, r.log_start_offset};
    }
    include = svc.fetch_sessions.finish(session, answers, wall_clock_ms());
  }

  // Partitions of one topic that follow each other share its entry.
  bool any_error = false;
  std::vector<uint64_t> topic_bytes;
  const SessionKey* topic_key = nullptr;
  for (size_t i = 0; i < wanted.size(); ++i) {
    if (!include[i]) continue;
    const auto& key = session.partitions[i].key;
    if (!topic_key || key.topic != topic_key->topic || key.topic_id != topic_key->topic_id) {
      FetchResponse::FetchableTopicResponse tr;
      tr.topic = wanted[i].tp.topic;
      tr.topic_id = key.topic_id;
      resp.responses.push_back(std::move(tr));
      topic_bytes.push_back(0);
      topic_key = &key;
    }
    FetchResponse::PartitionData pd;
    pd.partition_index = wanted[i].tp.partition;
    auto& r = reads[i];
    pd.error_code = protocol::code(wanted[i].error != ErrorCode::none ? wanted[i].error : r.error);
    pd.high_watermark = r.high_watermark;
    pd.last_stable_offset = r.last_stable_offset;
    pd.log_start_offset = r.log_start_offset;
    pd.preferred_read_replica = r.preferred_read_replica;
    pd.aborted_transactions.emplace();
    for (const auto& t : r.aborted) {
      FetchResponse::AbortedTransaction at;
      at.producer_id = t.producer_id;
      at.first_offset = t.first_offset;
      pd.aborted_transactions->push_back(std::move(at));
    }
    any_error = any_error || pd.error_code != 0;
    topic_bytes.back() += r.records.size();
    pd.records = std::move(r.records);
    resp.responses.back().partitions.push_back(std::move(pd));
  }
  // Consumers' reads only (Kafka's BytesOut; replication is counted by the followers).
  for (size_t t = 0; t < topic_bytes.size() && replica_id < 0; ++t) {
    if (topic_bytes[t] > 0) svc.metrics.topics().row(resp.responses[t].topic).add(metrics::BrokerMetrics::bytes_out, topic_bytes[t]);
  }
  if (any_error) svc.metrics.api(ctx.request.api_key).errors.add();
  // consumer_byte_rate: what this answer carries counts against the client's bucket; a client
  // over its quota waits before its next fetch (KIP-219 from v8: told to, and its connection
  // muted; before that the answer itself waits).
  if (replica_id < 0) {
    uint64_t bytes = 0;
    for (uint64_t b : topic_bytes) bytes += b;
    const int64_t throttle_ms = record_quota(ctx, quota::kConsumerByteRate, static_cast<double>(bytes));
    resp.throttle_time_ms = static_cast<int32_t>(throttle_ms);
    if (ctx.request.connection)
      svc.metrics.principal_traffic(ctx.request.connection->principal, metrics::BrokerMetrics::principal_bytes_out,
                                    bytes, throttle_ms);
    mute(ctx, throttle_ms);
    co_await answer_later(ctx, throttle_ms, 8);
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
