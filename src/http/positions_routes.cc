// POST and GET /v1/groups/{group}/positions: a group's committed offsets through the group
// coordinator (this node's when it coordinates the group, else the coordinator's, once this
// node has authorized the call), with each partition's high watermark and the lag.
#include <boost/json/array.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "brokerd/protocol/messages/describe_groups_request.h"
#include "brokerd/protocol/messages/describe_groups_response.h"
#include "brokerd/protocol/messages/find_coordinator_request.h"
#include "brokerd/protocol/messages/find_coordinator_response.h"
#include "brokerd/protocol/messages/list_offsets_request.h"
#include "brokerd/protocol/messages/list_offsets_response.h"
#include "brokerd/protocol/messages/metadata_request.h"
#include "brokerd/protocol/messages/metadata_response.h"
#include "brokerd/protocol/messages/offset_commit_request.h"
#include "brokerd/protocol/messages/offset_commit_response.h"
#include "brokerd/protocol/messages/offset_fetch_request.h"
#include "brokerd/protocol/messages/offset_fetch_response.h"
#include "brokerd/metadata/metadata_store.h"
#include "http/api_routes.h"

namespace brokerd::http {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

constexpr int16_t kDescribeGroupsVersion = 5;

bool coordinator_elsewhere(ErrorCode e) { return e == ErrorCode::not_coordinator; }

// The node that coordinates `group`, as this node's FindCoordinator answers the caller; or
// the error.
asio::awaitable<std::variant<int32_t, ErrorCode>> coordinator_of(ApiContext& ctx, Call& call, const std::string& group) {
  protocol::FindCoordinatorRequest req;
  req.key = group;
  req.key_type = 0;
  auto resp = co_await ctx.kafka.here<protocol::FindCoordinatorResponse>(call.connection, req, kFindCoordinatorVersion);
  if (resp.error_code != 0) co_return static_cast<ErrorCode>(resp.error_code);
  co_return resp.node_id;
}

// Runs `req` where the group is coordinated: here first (which authorizes it), then at the
// coordinator when `elsewhere(response)` says this node is not it (`forwarded` then says so).
template <typename Resp, typename Req, typename Elsewhere>
asio::awaitable<std::variant<Resp, Reply>> at_coordinator(ApiContext& ctx, Call& call, const std::string& group,
                                                          const Req& req, int16_t version, Elsewhere elsewhere,
                                                          bool* forwarded = nullptr) {
  auto here = co_await ctx.kafka.here<Resp>(call.connection, req, version);
  if (!elsewhere(here)) co_return std::move(here);
  if (forwarded) *forwarded = true;
  auto node = co_await coordinator_of(ctx, call, group);
  if (auto* e = std::get_if<ErrorCode>(&node)) co_return error_reply(*e, "finding the coordinator of group " + group);
  const int32_t id = std::get<int32_t>(node);
  if (id == ctx.node_id || id < 0)
    co_return error_reply(ErrorCode::coordinator_not_available, "the coordinator of group " + group + " is moving");
  auto there = co_await ctx.kafka.at<Resp>(id, req, version, ctx.request_timeout_ms);
  if (!there)
    co_return error_reply(ErrorCode::coordinator_not_available, "the coordinator (node " + std::to_string(id) + ") did not answer");
  co_return std::move(*there);
}

}  // namespace

asio::awaitable<Reply> save_positions(ApiContext& ctx, Call& call, const std::string& group) {
  auto parsed = json_object_of(call.body);
  if (auto* r = std::get_if<Reply>(&parsed)) co_return std::move(*r);
  const auto& o = std::get<json::object>(parsed);
  Fields f(o, "");
  auto member = f.text("member_id");
  auto generation = f.integer("generation_id", false, -1, INT32_MAX);
  if (f.failed()) co_return bad_request(f.error);
  const auto* list = f.raw("positions");
  if (!list || !list->is_array() || list->as_array().empty())
    co_return bad_request("\"positions\" must be a non-empty array");
  protocol::OffsetCommitRequest req;
  req.group_id = group;
  req.generation_id_or_member_epoch = static_cast<int32_t>(generation.value_or(-1));
  req.member_id = member.value_or("");
  std::map<std::string, size_t> topic_index;
  json::array saved;
  size_t i = 0;
  for (const auto& item : list->as_array()) {
    const std::string where = "positions[" + std::to_string(i++) + "]";
    if (!item.is_object()) co_return bad_request(where + " must be an object");
    Fields pf(item.as_object(), where);
    auto topic = pf.text("topic", true);
    auto partition = pf.integer("partition", true, 0, INT32_MAX);
    auto offset = pf.integer("offset", true, 0, INT64_MAX);
    if (pf.failed()) co_return bad_request(pf.error);
    auto [it, fresh] = topic_index.emplace(*topic, req.topics.size());
    if (fresh) req.topics.emplace_back().name = *topic;
    auto& p = req.topics[it->second].partitions.emplace_back();
    p.partition_index = static_cast<int32_t>(*partition);
    p.committed_offset = *offset;
    json::object s;
    s["topic"] = *topic;
    s["partition"] = *partition;
    s["offset"] = *offset;
    saved.push_back(std::move(s));
  }
  // Sent on only when this node refused nothing but its coordination: a partition refused here
  // (its topic not authorized, say) must never be committed by the coordinator, which would
  // take the request as this node's.
  auto elsewhere = [](const protocol::OffsetCommitResponse& r) {
    bool any = false;
    for (const auto& t : r.topics)
      for (const auto& p : t.partitions) {
        if (!coordinator_elsewhere(static_cast<ErrorCode>(p.error_code))) return false;
        any = true;
      }
    return any;
  };
  auto answer = co_await at_coordinator<protocol::OffsetCommitResponse>(ctx, call, group, req, kOffsetCommitVersion, elsewhere);
  if (auto* r = std::get_if<Reply>(&answer)) co_return std::move(*r);
  // A refusal says more than a coordinator that is moving: it is reported first.
  for (const bool retriable : {false, true})
    for (const auto& t : std::get<protocol::OffsetCommitResponse>(answer).topics)
      for (const auto& p : t.partitions) {
        const auto code = static_cast<ErrorCode>(p.error_code);
        if (code != ErrorCode::none && (status_of(code) == 503) == retriable)
          co_return error_reply(code, "saving the position of " + t.name + "-" + std::to_string(p.partition_index) +
                                          " for group " + group);
      }
  json::object body;
  body["group"] = group;
  body["positions"] = std::move(saved);
  co_return json_reply(body);
}

asio::awaitable<Reply> read_positions(ApiContext& ctx, Call& call, const std::string& group) {
  protocol::OffsetFetchRequest req;
  req.group_id = group;
  req.topics = std::nullopt;  // every partition the group has a position for
  auto elsewhere = [](const protocol::OffsetFetchResponse& r) {
    return coordinator_elsewhere(static_cast<ErrorCode>(r.error_code));
  };
  bool forwarded = false;
  auto answer = co_await at_coordinator<protocol::OffsetFetchResponse>(ctx, call, group, req, kOffsetFetchVersion,
                                                                       elsewhere, &forwarded);
  if (auto* r = std::get_if<Reply>(&answer)) co_return std::move(*r);
  auto& fetched = std::get<protocol::OffsetFetchResponse>(answer);
  if (fetched.error_code != 0)
    co_return error_reply(static_cast<ErrorCode>(fetched.error_code), "reading the positions of group " + group);
  // A coordinator elsewhere answered this node, which may see every topic: the topics the
  // caller may not describe are left out, as the coordinator would have for the caller (an
  // answer from here left them out already).
  if (forwarded && !fetched.topics.empty()) {
    protocol::MetadataRequest mreq;
    mreq.allow_auto_topic_creation = false;
    mreq.topics = std::vector<protocol::MetadataRequest::MetadataRequestTopic>();
    for (const auto& t : fetched.topics) mreq.topics->emplace_back().name = t.name;
    auto visible = co_await ctx.kafka.here<protocol::MetadataResponse>(call.connection, mreq, kMetadataVersion);
    std::set<std::string> hidden;
    for (const auto& t : visible.topics)
      if (static_cast<ErrorCode>(t.error_code) == ErrorCode::topic_authorization_failed) hidden.insert(t.name.value_or(""));
    std::erase_if(fetched.topics, [&](const auto& t) { return hidden.count(t.name) > 0; });
  }

  struct Position {
    int64_t offset = -1;
    int64_t latest = -1;
  };
  std::map<std::pair<std::string, int32_t>, Position> positions;
  for (const auto& t : fetched.topics)
    for (const auto& p : t.partitions)
      if (p.error_code == 0 && p.committed_offset >= 0) positions[{t.name, p.partition_index}].offset = p.committed_offset;

  if (positions.empty()) {
    // No position: a group nobody knows is 404, a known one has none yet.
    protocol::DescribeGroupsRequest dreq;
    dreq.groups.push_back(group);
    auto described = co_await at_coordinator<protocol::DescribeGroupsResponse>(
        ctx, call, group, dreq, kDescribeGroupsVersion, [](const protocol::DescribeGroupsResponse& r) {
          return !r.groups.empty() && coordinator_elsewhere(static_cast<ErrorCode>(r.groups.front().error_code));
        });
    if (auto* r = std::get_if<Reply>(&described)) co_return std::move(*r);
    const auto& groups = std::get<protocol::DescribeGroupsResponse>(described).groups;
    if (groups.empty() || groups.front().group_state == "Dead")
      co_return error_reply(ErrorCode::group_id_not_found, "unknown group " + group);
    if (groups.front().error_code != 0)
      co_return error_reply(static_cast<ErrorCode>(groups.front().error_code), "describing group " + group);
  }

  // The high watermark of each partition, from its leader (asked here first).
  protocol::ListOffsetsRequest lreq;
  lreq.replica_id = -1;
  lreq.isolation_level = 0;
  lreq.timeout_ms = static_cast<int32_t>(ctx.request_timeout_ms);
  std::map<std::string, size_t> topic_index;
  for (const auto& [tp, pos] : positions) {
    auto [it, fresh] = topic_index.emplace(tp.first, lreq.topics.size());
    if (fresh) lreq.topics.emplace_back().name = tp.first;
    auto& lp = lreq.topics[it->second].partitions.emplace_back();
    lp.partition_index = tp.second;
    lp.timestamp = -1;  // latest
  }
  auto take = [&](const protocol::ListOffsetsResponse& r, std::map<int32_t, protocol::ListOffsetsRequest>* elsewhere) {
    const auto image = ctx.metadata.image();
    for (const auto& t : r.topics)
      for (const auto& p : t.partitions) {
        auto it = positions.find({t.name, p.partition_index});
        if (it == positions.end()) continue;
        if (p.error_code == 0) {
          it->second.latest = p.offset;
        } else if (elsewhere && static_cast<ErrorCode>(p.error_code) == ErrorCode::not_leader_or_follower) {
          const auto* meta = image->topic(t.name);
          const auto* assignment = meta ? meta->partition(p.partition_index) : nullptr;
          if (!assignment || assignment->leader < 0 || assignment->leader == ctx.node_id) continue;
          auto& fwd = (*elsewhere)[assignment->leader];
          fwd.replica_id = -1;
          fwd.timeout_ms = lreq.timeout_ms;
          auto found = std::find_if(fwd.topics.begin(), fwd.topics.end(), [&](const auto& x) { return x.name == t.name; });
          if (found == fwd.topics.end()) {
            fwd.topics.emplace_back().name = t.name;
            found = fwd.topics.end() - 1;
          }
          auto& lp = found->partitions.emplace_back();
          lp.partition_index = p.partition_index;
          lp.timestamp = -1;
        }
      }
  };
  if (!lreq.topics.empty()) {
    std::map<int32_t, protocol::ListOffsetsRequest> elsewhere;
    take(co_await ctx.kafka.here<protocol::ListOffsetsResponse>(call.connection, lreq, kListOffsetsVersion), &elsewhere);
    for (const auto& [leader, fwd] : elsewhere) {
      auto resp = co_await ctx.kafka.at<protocol::ListOffsetsResponse>(leader, fwd, kListOffsetsVersion,
                                                                       ctx.request_timeout_ms);
      if (resp) take(*resp, nullptr);
    }
  }

  json::array list;
  for (const auto& [tp, pos] : positions) {
    json::object e;
    e["topic"] = tp.first;
    e["partition"] = tp.second;
    e["offset"] = pos.offset;
    if (pos.latest >= 0) {
      e["latest_offset"] = pos.latest;
      e["lag"] = std::max<int64_t>(0, pos.latest - pos.offset);
    } else {
      e["latest_offset"] = nullptr;  // its leader did not answer
      e["lag"] = nullptr;
    }
    list.push_back(std::move(e));
  }
  json::object body;
  body["group"] = group;
  body["positions"] = std::move(list);
  co_return json_reply(body);
}

}  // namespace brokerd::http
