// POST /v1/topics and GET /v1/topics/{topic}/metadata.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>

#include "brokerd/protocol/messages/create_topics_request.h"
#include "brokerd/protocol/messages/create_topics_response.h"
#include "brokerd/protocol/messages/metadata_request.h"
#include "brokerd/metadata/metadata_store.h"
#include "http/api_routes.h"

namespace brokerd::http {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

// A config value as Kafka takes it: text; numbers and booleans as JSON writes them.
std::optional<std::string> config_text(const json::value& v) {
  if (v.is_string()) return std::string(v.as_string());
  if (v.is_int64()) return std::to_string(v.as_int64());
  if (v.is_uint64()) return std::to_string(v.as_uint64());
  if (v.is_bool()) return v.as_bool() ? "true" : "false";
  return std::nullopt;
}

// The topic as this node's image holds it, in a Metadata answer's shape (no partitions while
// the image does not have it yet).
protocol::MetadataResponse::MetadataResponseTopic from_image(const metadata::MetadataImage& image, const std::string& name) {
  protocol::MetadataResponse::MetadataResponseTopic t;
  t.name = name;
  const auto* meta = image.topic(name);
  if (!meta) return t;
  t.topic_id = meta->id;
  for (int32_t i = 0; i < meta->partition_count(); ++i) {
    const auto* a = meta->partition(i);
    auto& p = t.partitions.emplace_back();
    p.partition_index = i;
    p.leader_id = a->leader;
    p.replica_nodes = a->replicas;
    p.isr_nodes = a->isr;
  }
  return t;
}

bool every_partition_led(const protocol::MetadataResponse::MetadataResponseTopic& t, int64_t partitions) {
  if (static_cast<int64_t>(t.partitions.size()) != partitions) return false;
  for (const auto& p : t.partitions)
    if (p.leader_id < 0) return false;
  return true;
}

}  // namespace

asio::awaitable<Reply> create_topic(ApiContext& ctx, Call& call) {
  auto parsed = json_object_of(call.body);
  if (auto* r = std::get_if<Reply>(&parsed)) co_return std::move(*r);
  const auto& o = std::get<json::object>(parsed);
  Fields f(o, "");
  auto name = f.text("name", true);
  auto partitions = f.integer("partitions", true, 1, 1000000);
  auto copies = f.integer("copies", true, 1, 32767);
  auto retention_ms = f.integer("retention_ms", false, -1);
  auto retention_bytes = f.integer("retention_bytes", false, -1);
  auto keep_latest = f.boolean("keep_latest");
  if (f.failed()) co_return bad_request(f.error);

  protocol::CreateTopicsRequest req;
  req.timeout_ms = static_cast<int32_t>(ctx.request_timeout_ms);
  auto& t = req.topics.emplace_back();
  t.name = *name;
  t.num_partitions = static_cast<int32_t>(*partitions);
  t.replication_factor = static_cast<int16_t>(*copies);
  auto add = [&](std::string key, std::string value) {
    auto& c = t.configs.emplace_back();
    c.name = std::move(key);
    c.value = std::move(value);
  };
  if (const auto* configs = f.raw("configs"); configs && !configs->is_null()) {
    if (!configs->is_object()) co_return bad_request("\"configs\" must be an object of names to values");
    for (const auto& [key, value] : configs->as_object()) {
      auto text = config_text(value);
      if (!text) co_return bad_request("config \"" + std::string(key) + "\" must be a string, number or boolean");
      add(std::string(key), *text);
    }
  }
  if (retention_ms) add("retention.ms", std::to_string(*retention_ms));
  if (retention_bytes) add("retention.bytes", std::to_string(*retention_bytes));
  if (keep_latest) add("cleanup.policy", *keep_latest ? "compact" : "delete");

  auto resp = co_await ctx.kafka.here<protocol::CreateTopicsResponse>(call.connection, req, kCreateTopicsVersion);
  if (resp.topics.size() != 1) co_return error_reply(ErrorCode::unknown_server_error, "no answer for the topic");
  const auto& result = resp.topics.front();
  if (result.error_code != 0)
    co_return error_reply(static_cast<ErrorCode>(result.error_code), result.error_message.value_or("topic " + *name));

  // Answered once every live broker's metadata shows every partition with a leader, so that
  // the next call serves the topic whatever node it goes to (or as it is when time runs out).
  asio::steady_timer pause(co_await asio::this_coro::executor);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ctx.request_timeout_ms);
  auto wait = [&]() -> asio::awaitable<bool> {
    if (std::chrono::steady_clock::now() >= deadline) co_return false;
    pause.expires_after(std::chrono::milliseconds(50));
    co_await pause.async_wait(asio::as_tuple(asio::use_awaitable));
    co_return true;
  };
  // The creator is told the topic's layout even without DESCRIBE on it: from this node's image.
  protocol::MetadataResponse::MetadataResponseTopic here;
  while (true) {
    here = from_image(*ctx.metadata.image(), *name);
    if (every_partition_led(here, *partitions) || !co_await wait()) break;
  }
  protocol::MetadataRequest ask;
  ask.topics = std::vector<protocol::MetadataRequest::MetadataRequestTopic>(1);
  ask.topics->front().name = *name;
  ask.allow_auto_topic_creation = false;
  for (const auto& b : ctx.metadata.image()->brokers) {
    if (b.node_id == ctx.node_id || b.fenced) continue;
    while (true) {
      auto there = co_await ctx.kafka.at<protocol::MetadataResponse>(b.node_id, ask, kMetadataVersion, 2000);
      if (there && there->topics.size() == 1 && there->topics.front().error_code == 0 &&
          every_partition_led(there->topics.front(), *partitions))
        break;
      if (!co_await wait()) break;
    }
  }
  co_return json_reply(topic_json(here), 201);
}

asio::awaitable<Reply> topic_metadata(ApiContext& ctx, Call& call, const std::string& topic) {
  auto described = co_await describe_topic(ctx, call, topic);
  if (auto* r = std::get_if<Reply>(&described)) co_return std::move(*r);
  co_return json_reply(topic_json(std::get<protocol::MetadataResponse::MetadataResponseTopic>(described)));
}

}  // namespace brokerd::http
