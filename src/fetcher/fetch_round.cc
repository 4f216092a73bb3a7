#include "fetch_round.h"

#include <boost/asio/post.hpp>

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>

#include "brokerd/partitions/partition_call.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/fetcher/fetch_session.h"
#include "brokerd/metrics/registry.h"
#include "brokerd/protocol/messages/fetch_request.h"
#include "brokerd/protocol/messages/fetch_response.h"
#include "brokerd/protocol/messages/offset_for_leader_epoch_request.h"
#include "brokerd/protocol/messages/offset_for_leader_epoch_response.h"
#include "brokerd/protocol/wire.h"
#include "brokerd/storage/record_batch.h"

namespace brokerd::fetcher {
namespace {

using partitions::Partition;
using partitions::PartitionManager;
using partitions::TopicPartition;
using protocol::ErrorCode;

constexpr int16_t kFetch = 1, kFetchVersion = 12;
constexpr int16_t kEpochEnd = 23, kEpochEndVersion = 4;

// Requests of one kind for the leader, and their partitions (kept apart: the partitions go
// to call_on_partitions as they are).
template <typename T>
struct Asks {
  std::vector<TopicPartition> tps;
  std::vector<T> requests;

  void add(const TopicPartition& tp, T request) {
    tps.push_back(tp);
    requests.push_back(std::move(request));
  }
  size_t size() const { return tps.size(); }
  bool empty() const { return tps.empty(); }
};

// The batches of a fetch answer, whole ones only (the last may be cut by max_bytes).
std::vector<replication::Batch> split_batches(std::span<const std::byte> bytes) {
  std::vector<replication::Batch> out;
  size_t pos = 0;
  while (bytes.size() - pos >= storage::batch_layout::header_size) {
    storage::RecordBatchView v(bytes.subspan(pos));
    if (v.batch_length() <= 0 || v.size() > bytes.size() - pos) break;
    out.push_back({v.base_offset(), v.last_offset(), v.partition_leader_epoch(), bytes.subspan(pos, v.size())});
    pos += v.size();
  }
  return out;
}

// Partitions whose answer was an error sit out the backoff; the others go on.
void hold_errors(const FetcherOptions& options, const quorum::Voter& leader, std::span<const TopicPartition> tps,
                 std::span<const ErrorCode> errors, HeldPartitions& held, int64_t now) {
  for (size_t i = 0; i < tps.size(); ++i) {
    if (errors[i] == ErrorCode::none) continue;
    held[tps[i]] = now + options.backoff_ms;
    module_logger("replication")->debug("leader {} answered {} for {}-{}; asking again in {} ms", leader.id,
                                        protocol::error_name(errors[i]), tps[i].topic, tps[i].partition,
                                        options.backoff_ms);
  }
}

// Tells every asked core that its request got no answer.
template <typename T>
void fail_all(PartitionManager& pm, const Asks<T>& asks) {
  const int64_t now = wall_clock_ms();
  partitions::call_on_partitions(pm, asks.tps, [now](size_t, Partition& p) {
    p.replica().request_failed(now);
    return true;
  }).wait();
}

// A new entry for tp in a request's per-topic list (topics in the order first named).
template <typename Topics>
auto& partition_entry(Topics& topics, std::map<std::string, size_t>& index, const TopicPartition& tp) {
  auto [it, fresh] = index.try_emplace(tp.topic, topics.size());
  if (fresh) topics.emplace_back().topic = tp.topic;
  auto& p = topics[it->second].partitions.emplace_back();
  p.partition = tp.partition;
  return p;
}

// Sends `req`; the decoded answer aliases the response buffer (records are not copied out
// of it).
template <typename Msg, typename Req>
std::optional<Msg> call(controller::ControllerClient& client, const quorum::Voter& leader, int16_t api, int16_t version,
                        const Req& req) {
  protocol::Writer w;
  req.encode(w, version);
  auto got = client.call(leader, api, version, std::move(w).finish_bytes());
  if (!got) return std::nullopt;
  try {
    protocol::Reader r(got->data, got->owner);
    Msg m;
    m.decode(r, version);
    return m;
  } catch (const protocol::DecodeError& e) {
    module_logger("replication")->warn("leader {} sent a malformed answer to API {}: {}", leader.id, api, e.what());
    client.close();
    return std::nullopt;
  }
}

bool ask_epoch_ends(const FetcherOptions& options, PartitionManager& pm, const quorum::Voter& leader,
                    const Asks<replication::EpochEndRequest>& asks, HeldPartitions& held,
                    controller::ControllerClient& client) {
  protocol::OffsetForLeaderEpochRequest req;
  req.replica_id = options.node_id;
  std::map<std::string, size_t> topic_index;
  for (size_t i = 0; i < asks.size(); ++i) {
    auto& p = partition_entry(req.topics, topic_index, asks.tps[i]);
    p.current_leader_epoch = asks.requests[i].current_leader_epoch;
    p.leader_epoch = asks.requests[i].leader_epoch;
  }
  auto resp = call<protocol::OffsetForLeaderEpochResponse>(client, leader, kEpochEnd, kEpochEndVersion, req);
  if (!resp) {
    fail_all(pm, asks);
    return false;
  }
  std::unordered_map<TopicPartition, protocol::OffsetForLeaderEpochResponse::EpochEndOffset> answers;
  for (const auto& t : resp->topics)
    for (const auto& p : t.partitions) answers[{t.topic, p.partition}] = p;
  std::vector<replication::EpochEndResponse> replies(asks.size());
  std::vector<ErrorCode> errors(asks.size());
  for (size_t i = 0; i < asks.size(); ++i) {
    auto it = answers.find(asks.tps[i]);
    auto& r = replies[i];
    r.current_leader_epoch = asks.requests[i].current_leader_epoch;
    r.error = it == answers.end() ? ErrorCode::unknown_server_error : static_cast<ErrorCode>(it->second.error_code);
    errors[i] = r.error;
    if (it != answers.end()) {
      r.leader_epoch = it->second.leader_epoch;
      r.end_offset = it->second.end_offset;
    }
  }
  const int64_t now = wall_clock_ms();
  hold_errors(options, leader, asks.tps, errors, held, now);
  partitions::call_on_partitions(pm, asks.tps, [&replies, now](size_t i, Partition& p) {
    p.replica().handle_epoch_end_response(replies[i], now);
    return true;
  }).wait();
  return true;
}

// The request `plan` makes: every partition it names in full, and those it forgets.
protocol::FetchRequest fetch_request(const FetcherOptions& options, const FollowerFetchSession::Plan& plan) {
  protocol::FetchRequest req;
  req.replica_id = options.node_id;
  req.max_wait_ms = options.wait_max_ms;
  req.min_bytes = 1;
  req.max_bytes = options.response_max_bytes;
  req.session_id = plan.session_id;
  req.session_epoch = plan.epoch;
  std::map<std::string, size_t> topic_index;
  for (const auto& w : plan.send) {
    auto& p = partition_entry(req.topics, topic_index, w.tp);
    p.current_leader_epoch = w.position.current_leader_epoch;
    p.fetch_offset = w.position.fetch_offset;
    p.log_start_offset = w.position.log_start_offset;
    p.partition_max_bytes = w.position.max_bytes;
  }
  std::map<std::string, size_t> forgotten_index;
  for (const auto& tp : plan.forget) {
    auto [it, fresh] = forgotten_index.try_emplace(tp.topic, req.forgotten_topics_data.size());
    if (fresh) req.forgotten_topics_data.emplace_back().topic = tp.topic;
    req.forgotten_topics_data[it->second].partitions.push_back(tp.partition);
  }
  return req;
}

bool fetch(const FetcherOptions& options, PartitionManager& pm, const quorum::Voter& leader,
           const Asks<replication::FetchRequest>& asks, FollowerFetchSession& session, HeldPartitions& held,
           controller::ControllerClient& client) {
  std::vector<FetchWant> wanted;
  wanted.reserve(asks.size());
  for (size_t i = 0; i < asks.size(); ++i) {
    const auto& a = asks.requests[i];
    wanted.push_back({asks.tps[i], {a.current_leader_epoch, a.fetch_offset, a.log_start_offset, options.partition_max_bytes}});
  }
  const auto plan = session.plan(wanted);
  auto resp = call<protocol::FetchResponse>(client, leader, kFetch, kFetchVersion, fetch_request(options, plan));
  if (!resp || resp->error_code != 0) {
    const auto error = resp ? static_cast<ErrorCode>(resp->error_code) : ErrorCode::network_exception;
    if (resp && !plan.full())
      module_logger("replication")->debug("leader {} refused fetch session {} epoch {}: {}", leader.id, plan.session_id,
                                          plan.epoch, protocol::error_name(error));
    session.failed(error);
    fail_all(pm, asks);
    return false;
  }
  session.answered(plan, resp->session_id);
  std::unordered_map<TopicPartition, const protocol::FetchResponse::PartitionData*> answers;
  for (const auto& t : resp->responses)
    for (const auto& p : t.partitions) {
      answers[{t.topic, p.partition_index}] = &p;
      session.answered_partition({t.topic, p.partition_index}, p.high_watermark, p.log_start_offset);
    }
  // What each asked core hears. Left out of an incremental answer: nothing new, the high
  // watermark and log start as last told.
  std::vector<replication::FetchResponse> replies(asks.size());
  std::vector<SharedBytes> records(asks.size());  // the batches, still in the response buffer
  std::vector<ErrorCode> errors(asks.size());
  for (size_t i = 0; i < asks.size(); ++i) {
    const auto& tp = asks.tps[i];
    auto& r = replies[i];
    r.leader_epoch = asks.requests[i].current_leader_epoch;
    auto it = answers.find(tp);
    if (it == answers.end()) {
      const auto last = plan.full() ? std::nullopt : session.last_answer(tp);
      if (last) {
        r.high_watermark = last->high_watermark;
        r.log_start_offset = last->log_start_offset;
      } else {
        r.error = ErrorCode::unknown_server_error;
      }
    } else {
      const auto& pd = *it->second;
      r.error = static_cast<ErrorCode>(pd.error_code);
      r.high_watermark = pd.high_watermark;
      r.log_start_offset = pd.log_start_offset;
      auto& bytes = records[i];
      if (pd.records.parts.size() == 1 && std::holds_alternative<SharedBytes>(pd.records.parts[0])) {
        bytes = std::get<SharedBytes>(pd.records.parts[0]);
      } else if (!pd.records.is_null && pd.records.size() > 0) {
        bytes = SharedBytes::copy_of(pd.records.to_bytes());
      }
      if (options.bytes_replicated && bytes.size() > 0) options.bytes_replicated->add(bytes.size());
    }
    errors[i] = r.error;
  }
  const int64_t now = wall_clock_ms();
  hold_errors(options, leader, asks.tps, errors, held, now);
  partitions::call_on_partitions(pm, asks.tps, [&pm, self = options.node_id, &replies, &records, now](size_t i, Partition& p) {
    const auto& bytes = records[i];
    if (p.follower_throttled && !p.in_isr(self)) pm.follower_quota().record(bytes.size(), now);
    replies[i].batches = split_batches(bytes.data);
    p.replica().handle_fetch_response(replies[i], now);
    return true;
  }).wait();
  return true;
}

}  // namespace

RoundResult fetch_round(const FetcherOptions& options, PartitionManager& pm, const quorum::Voter& leader,
                        const std::vector<TopicPartition>& all_followed, FollowerFetchSession& session,
                        HeldPartitions& held, controller::ControllerClient& client) {
  const int64_t now = wall_clock_ms();
  std::erase_if(held, [now](const auto& h) { return h.second <= now; });
  std::vector<TopicPartition> not_held;
  if (!held.empty()) {
    not_held.reserve(all_followed.size());
    for (const auto& tp : all_followed)
      if (!held.contains(tp)) not_held.push_back(tp);
  }
  const auto& followed = held.empty() ? all_followed : not_held;
  const int32_t self = options.node_id;
  const int64_t backoff_ms = options.backoff_ms;
  auto wanted = partitions::call_on_partitions(
                    pm, followed,
                    [&pm, now, self, backoff_ms](size_t, Partition& p) -> std::optional<replication::FollowerRequest> {
                      // A throttled copy (partitions/replication_throttle.h) waits while the rate is spent.
                      if (p.follower_throttled && !p.in_isr(self) && pm.follower_quota().exceeded(now)) return std::nullopt;
                      // A copy that could not write what it fetched (a full disk) does not fetch it again at once.
                      if (now - p.replica_write_failed_ms() < backoff_ms) return std::nullopt;
                      return p.replica().next_request(now);
                    })
                    .get();
  Asks<replication::EpochEndRequest> epoch_asks;
  Asks<replication::FetchRequest> fetches;
  for (size_t i = 0; i < wanted.size(); ++i) {
    const auto& r = wanted[i];
    if (!r || !*r) continue;
    if (const auto* e = std::get_if<replication::EpochEndRequest>(&**r)) epoch_asks.add(followed[i], *e);
    else fetches.add(followed[i], std::get<replication::FetchRequest>(**r));
  }
  if (epoch_asks.empty() && fetches.empty()) return RoundResult::idle;
  bool ok = true;
  if (!epoch_asks.empty()) ok = ask_epoch_ends(options, pm, leader, epoch_asks, held, client) && ok;
  if (!fetches.empty()) ok = fetch(options, pm, leader, fetches, session, held, client) && ok;
  return ok ? RoundResult::ok : RoundResult::failed;
}

}  // namespace brokerd::fetcher
