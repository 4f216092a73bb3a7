#include "fetch_round.h"

#include <boost/asio/post.hpp>

#include <future>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

#include "brokerd/cluster/partition_call.h"
#include "brokerd/cluster/partition_manager.h"
#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/metrics/registry.h"
#include "brokerd/protocol/messages/fetch_request.h"
#include "brokerd/protocol/messages/fetch_response.h"
#include "brokerd/protocol/messages/offset_for_leader_epoch_request.h"
#include "brokerd/protocol/messages/offset_for_leader_epoch_response.h"
#include "brokerd/protocol/wire.h"
#include "brokerd/storage/record_batch.h"

namespace brokerd::fetcher {
namespace {

using cluster::Partition;
using cluster::PartitionManager;
using cluster::TopicPartition;
using protocol::ErrorCode;

constexpr int16_t kFetch = 1, kFetchVersion = 12;
constexpr int16_t kEpochEnd = 23, kEpochEndVersion = 4;

template <typename Fn>
auto on_shard(PartitionManager& pm, const TopicPartition& tp, Fn fn) {
  return cluster::call_on_partition(pm, tp, std::move(fn));
}

template <typename T>
struct Ask {
  TopicPartition tp;
  T request;
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

// Tells every asked core that its request got no answer.
template <typename T>
void fail_all(PartitionManager& pm, const std::vector<Ask<T>>& asks) {
  std::vector<std::future<std::optional<bool>>> done;
  const int64_t now = wall_clock_ms();
  for (const auto& a : asks)
    done.push_back(on_shard(pm, a.tp, [now](Partition& p) {
      p.replica().request_failed(now);
      return true;
    }));
  for (auto& f : done) f.wait();
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
  auto resp = std::make_shared<const Bytes>(std::move(*got));
  try {
    protocol::Reader r(*resp, resp);
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
                    const std::vector<Ask<replication::EpochEndRequest>>& asks, controller::ControllerClient& client) {
  protocol::OffsetForLeaderEpochRequest req;
  req.replica_id = options.node_id;
  std::map<std::string, size_t> topic_index;
  for (const auto& a : asks) {
    auto& p = partition_entry(req.topics, topic_index, a.tp);
    p.current_leader_epoch = a.request.current_leader_epoch;
    p.leader_epoch = a.request.leader_epoch;
  }
  auto resp = call<protocol::OffsetForLeaderEpochResponse>(client, leader, kEpochEnd, kEpochEndVersion, req);
  if (!resp) {
    fail_all(pm, asks);
    return false;
  }
  std::unordered_map<TopicPartition, protocol::OffsetForLeaderEpochResponse::EpochEndOffset> answers;
  for (const auto& t : resp->topics)
    for (const auto& p : t.partitions) answers[{t.topic, p.partition}] = p;
  std::vector<std::future<std::optional<bool>>> done;
  const int64_t now = wall_clock_ms();
  for (const auto& a : asks) {
    auto it = answers.find(a.tp);
    replication::EpochEndResponse r;
    r.current_leader_epoch = a.request.current_leader_epoch;
    r.error = it == answers.end() ? ErrorCode::unknown_server_error : static_cast<ErrorCode>(it->second.error_code);
    if (it != answers.end()) {
      r.leader_epoch = it->second.leader_epoch;
      r.end_offset = it->second.end_offset;
    }
    done.push_back(on_shard(pm, a.tp, [r, now](Partition& p) {
      p.replica().handle_epoch_end_response(r, now);
      return true;
    }));
  }
  for (auto& f : done) f.wait();
  return true;
}

bool fetch(const FetcherOptions& options, PartitionManager& pm, const quorum::Voter& leader,
           const std::vector<Ask<replication::FetchRequest>>& asks, controller::ControllerClient& client) {
  protocol::FetchRequest req;
  req.replica_id = options.node_id;
  req.max_wait_ms = options.wait_max_ms;
  req.min_bytes = 1;
  req.max_bytes = options.response_max_bytes;
  req.session_epoch = -1;
  std::map<std::string, size_t> topic_index;
  for (const auto& a : asks) {
    auto& p = partition_entry(req.topics, topic_index, a.tp);
    p.current_leader_epoch = a.request.current_leader_epoch;
    p.fetch_offset = a.request.fetch_offset;
    p.log_start_offset = a.request.log_start_offset;
    p.partition_max_bytes = options.partition_max_bytes;
  }
  auto resp = call<protocol::FetchResponse>(client, leader, kFetch, kFetchVersion, req);
  if (!resp || resp->error_code != 0) {
    fail_all(pm, asks);
    return false;
  }
  std::unordered_map<TopicPartition, const protocol::FetchResponse::PartitionData*> answers;
  for (const auto& t : resp->responses)
    for (const auto& p : t.partitions) answers[{t.topic, p.partition_index}] = &p;
  std::vector<std::future<std::optional<bool>>> done;
  const int64_t now = wall_clock_ms();
  bool any_error = false;
  for (const auto& a : asks) {
    auto it = answers.find(a.tp);
    SharedBytes bytes;  // the batches, still in the response buffer
    replication::FetchResponse r;
    r.leader_epoch = a.request.current_leader_epoch;
    if (it == answers.end()) {
      r.error = ErrorCode::unknown_server_error;
    } else {
      const auto& pd = *it->second;
      r.error = static_cast<ErrorCode>(pd.error_code);
      r.high_watermark = pd.high_watermark;
      r.log_start_offset = pd.log_start_offset;
      if (pd.records.parts.size() == 1 && std::holds_alternative<SharedBytes>(pd.records.parts[0])) {
        bytes = std::get<SharedBytes>(pd.records.parts[0]);
      } else if (!pd.records.is_null && pd.records.size() > 0) {
        bytes = SharedBytes::copy_of(pd.records.to_bytes());
      }
      if (options.bytes_replicated && bytes.size() > 0) options.bytes_replicated->add(bytes.size());
    }
    any_error = any_error || r.error != ErrorCode::none;
    done.push_back(on_shard(pm, a.tp, [&pm, self = options.node_id, r = std::move(r), bytes, now](Partition& p) mutable {
      if (p.follower_throttled && !p.in_isr(self)) pm.follower_quota().record(bytes.size(), now);
      r.batches = split_batches(bytes.data);
      p.replica().handle_fetch_response(r, now);
      return true;
    }));
  }
  for (auto& f : done) f.wait();
  return !any_error;
}

}  // namespace

RoundResult fetch_round(const FetcherOptions& options, PartitionManager& pm, const quorum::Voter& leader,
                        const std::vector<TopicPartition>& followed, controller::ControllerClient& client) {
  const int64_t now = wall_clock_ms();
  std::vector<std::pair<TopicPartition, std::future<std::optional<std::optional<replication::FollowerRequest>>>>> wanted;
  const int32_t self = options.node_id;
  const int64_t backoff_ms = options.backoff_ms;
  for (const auto& tp : followed)
    wanted.emplace_back(tp, on_shard(pm, tp, [&pm, now, self, backoff_ms](Partition& p) -> std::optional<replication::FollowerRequest> {
      // A throttled copy (cluster/replication_throttle.h) waits while the rate is spent.
      if (p.follower_throttled && !p.in_isr(self) && pm.follower_quota().exceeded(now)) return std::nullopt;
      // A copy that could not write what it fetched (a full disk) does not fetch it again at once.
      if (now - p.replica_write_failed_ms() < backoff_ms) return std::nullopt;
      return p.replica().next_request(now);
    }));
  std::vector<Ask<replication::EpochEndRequest>> epoch_asks;
  std::vector<Ask<replication::FetchRequest>> fetches;
  for (auto& [tp, f] : wanted) {
    auto r = f.get();
    if (!r || !*r) continue;
    if (auto* e = std::get_if<replication::EpochEndRequest>(&**r)) epoch_asks.push_back({tp, *e});
    else fetches.push_back({tp, std::get<replication::FetchRequest>(**r)});
  }
  if (epoch_asks.empty() && fetches.empty()) return RoundResult::idle;
  bool ok = true;
  if (!epoch_asks.empty()) ok = ask_epoch_ends(options, pm, leader, epoch_asks, client) && ok;
  if (!fetches.empty()) ok = fetch(options, pm, leader, fetches, client) && ok;
  return ok ? RoundResult::ok : RoundResult::failed;
}

}  // namespace brokerd::fetcher
