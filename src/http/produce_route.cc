// POST /v1/topics/{topic}/records: the records go where Java's producer would put them (the
// partition given, else murmur2 of the key, else one partition per request in turn), one batch
// per partition, through this node's Produce path; the partitions another node leads are sent
// to it once this node has authorized the write.
#include <boost/json/array.hpp>

#include <atomic>
#include <map>

#include "brokerd/auth/base64.h"
#include "brokerd/common/clock.h"
#include "brokerd/common/java_hash.h"
#include "brokerd/protocol/messages/produce_request.h"
#include "brokerd/protocol/messages/produce_response.h"
#include "brokerd/storage/batch_builder.h"
#include "http/api_routes.h"

namespace brokerd::http {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

struct OneRecord {
  int32_t partition = -1;
  int32_t index_in_batch = 0;
  std::optional<std::string> key, value;
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;
};

struct PartitionResult {
  ErrorCode error = ErrorCode::none;
  int64_t base_offset = -1;
  std::string message;
};

std::atomic<uint32_t> next_keyless_partition{0};

// A key, value or header value of the body: a string (base64 when `base64`), or null.
std::optional<std::string> bytes_of(const json::value& v, bool base64, std::string& error, std::string_view what) {
  if (v.is_null()) return std::nullopt;
  if (!v.is_string()) {
    error = std::string(what) + " must be a string or null";
    return std::nullopt;
  }
  std::string_view text(v.as_string());
  if (!base64) return std::string(text);
  auto decoded = auth::base64_decode(text);
  if (!decoded) error = std::string(what) + " is not base64";
  return decoded;
}

}  // namespace

asio::awaitable<Reply> produce_records(ApiContext& ctx, Call& call, const std::string& topic) {
  auto parsed = json_object_of(call.body);
  if (auto* r = std::get_if<Reply>(&parsed)) co_return std::move(*r);
  const auto& o = std::get<json::object>(parsed);
  Fields f(o, "");
  auto encoding = f.text("encoding");
  int16_t acks = -1;
  if (const auto* a = f.raw("acks"); a && !a->is_null()) {
    if (a->is_string() && a->as_string() == "all") acks = -1;
    else if (a->is_int64() && (a->as_int64() == -1 || a->as_int64() == 1)) acks = static_cast<int16_t>(a->as_int64());
    else co_return bad_request("\"acks\" must be \"all\", -1 or 1");
  }
  if (f.failed()) co_return bad_request(f.error);
  if (encoding && *encoding != "base64" && *encoding != "utf8")
    co_return bad_request("unknown encoding \"" + *encoding + "\": base64 or utf8");
  const bool base64 = encoding && *encoding == "base64";
  const auto* list = f.raw("records");
  if (!list || !list->is_array() || list->as_array().empty())
    co_return bad_request("\"records\" must be a non-empty array");

  auto described = co_await describe_topic(ctx, call, topic);
  if (auto* r = std::get_if<Reply>(&described)) co_return std::move(*r);
  const auto& meta = std::get<protocol::MetadataResponse::MetadataResponseTopic>(described);
  const auto partition_count = static_cast<int32_t>(meta.partitions.size());
  if (partition_count == 0) co_return error_reply(ErrorCode::leader_not_available, "topic " + topic + " has no partitions yet");
  std::map<int32_t, int32_t> leaders;
  for (const auto& p : meta.partitions) leaders[p.partition_index] = p.leader_id;

  // Records, each placed; keyless ones of this request share one partition (as Kafka's sticky
  // partitioner does), the next request takes the next.
  std::vector<OneRecord> records;
  records.reserve(list->as_array().size());
  std::optional<int32_t> keyless_partition;
  std::string error;
  size_t i = 0;
  for (const auto& item : list->as_array()) {
    const std::string where = "records[" + std::to_string(i++) + "]";
    if (!item.is_object()) co_return bad_request(where + " must be an object");
    Fields rf(item.as_object(), where);
    OneRecord rec;
    if (const auto* k = rf.raw("key")) rec.key = bytes_of(*k, base64, error, where + ".key");
    const auto* v = rf.raw("value");
    if (!v) co_return bad_request(where + ": \"value\" is required (null for a tombstone)");
    rec.value = bytes_of(*v, base64, error, where + ".value");
    if (const auto* hs = rf.raw("headers"); hs && !hs->is_null()) {
      if (!hs->is_array()) co_return bad_request(where + ".headers must be an array");
      for (const auto& h : hs->as_array()) {
        if (!h.is_object() || !h.as_object().if_contains("key") || !h.as_object().at("key").is_string())
          co_return bad_request(where + ".headers: each needs a string \"key\"");
        const auto* hv = h.as_object().if_contains("value");
        std::optional<std::string> value;
        if (hv) value = bytes_of(*hv, base64, error, where + ".headers.value");
        rec.headers.emplace_back(std::string(h.as_object().at("key").as_string()), std::move(value));
      }
    }
    auto partition = rf.integer("partition", false, 0, INT32_MAX);
    if (rf.failed()) co_return bad_request(rf.error);
    if (!error.empty()) co_return bad_request(error);
    if (partition) {
      if (*partition >= partition_count)
        co_return not_found("topic " + topic + " has no partition " + std::to_string(*partition));
      rec.partition = static_cast<int32_t>(*partition);
    } else if (rec.key) {
      const auto* sent = base64 && ctx.hash_encoded_key ? item.as_object().if_contains("key") : nullptr;
      const std::string_view hashed = sent && sent->is_string() ? std::string_view(sent->as_string()) : *rec.key;
      rec.partition = default_partition(storage::as_bytes(hashed), partition_count);
    } else {
      if (!keyless_partition)
        keyless_partition = static_cast<int32_t>(next_keyless_partition.fetch_add(1) % static_cast<uint32_t>(partition_count));
      rec.partition = *keyless_partition;
    }
    records.push_back(std::move(rec));
  }

  // One batch per partition, records in request order.
  std::map<int32_t, storage::BatchBuilder> batches;
  const int64_t now = wall_clock_ms();
  for (auto& rec : records) {
    auto& b = batches[rec.partition];
    rec.index_in_batch = b.count();
    std::vector<storage::RecordHeader> headers;
    headers.reserve(rec.headers.size());
    for (const auto& [k, hv] : rec.headers)
      headers.push_back({storage::as_bytes(k), hv ? std::optional(storage::as_bytes(*hv)) : std::nullopt});
    b.add(now, rec.key ? std::optional(storage::as_bytes(*rec.key)) : std::nullopt,
          rec.value ? std::optional(storage::as_bytes(*rec.value)) : std::nullopt, headers);
  }
  // Each batch is built once: the request here and one sent on to its leader carry the same.
  std::map<int32_t, std::shared_ptr<const Bytes>> built;
  for (const auto& [p, b] : batches) built[p] = std::make_shared<const Bytes>(b.build());
  auto request_for = [&](const std::vector<int32_t>& partitions) {
    protocol::ProduceRequest req;
    req.acks = acks;
    req.timeout_ms = static_cast<int32_t>(ctx.request_timeout_ms);
    auto& td = req.topic_data.emplace_back();
    td.name = topic;
    for (int32_t p : partitions) {
      auto& pd = td.partition_data.emplace_back();
      pd.index = p;
      const auto& batch = built.at(p);
      pd.records = protocol::Records::of(SharedBytes{batch, std::span<const std::byte>(*batch)});
    }
    return req;
  };
  std::map<int32_t, PartitionResult> results;
  auto take = [&](const protocol::ProduceResponse& resp) {
    for (const auto& t : resp.responses)
      for (const auto& p : t.partition_responses) {
        auto& r = results[p.index];
        r.error = static_cast<ErrorCode>(p.error_code);
        r.base_offset = p.base_offset;
        r.message = p.error_message.value_or("");
        if (!p.record_errors.empty() && p.record_errors.front().batch_index_error_message)
          r.message = *p.record_errors.front().batch_index_error_message;
      }
  };

  std::vector<int32_t> all;
  for (const auto& [p, b] : batches) all.push_back(p);
  const auto here = co_await ctx.kafka.here<protocol::ProduceResponse>(call.connection, request_for(all), kProduceVersion);
  take(here);
  // Authorized here but led elsewhere: to each leader once.
  std::map<int32_t, std::vector<int32_t>> elsewhere;
  for (const auto& [p, r] : results)
    if (r.error == ErrorCode::not_leader_or_follower && leaders[p] >= 0 && leaders[p] != ctx.node_id)
      elsewhere[leaders[p]].push_back(p);
  for (const auto& [leader, partitions] : elsewhere) {
    auto resp = co_await ctx.kafka.at<protocol::ProduceResponse>(leader, request_for(partitions), kProduceVersion,
                                                                 ctx.request_timeout_ms + 5000);
    if (resp) {
      take(*resp);
    } else {
      for (int32_t p : partitions)
        results[p] = {ErrorCode::request_timed_out, -1, "the leader (node " + std::to_string(leader) + ") did not answer"};
    }
  }
  mute_for(ctx, call.connection, here.throttle_time_ms);

  json::array offsets;
  offsets.reserve(records.size());
  size_t failed = 0;
  std::optional<ErrorCode> only_error;
  bool one_error = true;
  for (const auto& rec : records) {
    json::object e;
    e["partition"] = rec.partition;
    const auto& r = results[rec.partition];
    if (r.error == ErrorCode::none) {
      e["offset"] = r.base_offset + rec.index_in_batch;
    } else {
      ++failed;
      if (!only_error) only_error = r.error;
      else if (*only_error != r.error) one_error = false;
      e["error_code"] = protocol::code(r.error);
      e["error"] = json_error_name(r.error);
      if (!r.message.empty()) e["message"] = r.message;
    }
    offsets.push_back(std::move(e));
  }
  json::object body;
  body["offsets"] = std::move(offsets);
  Reply reply = json_reply(body);
  if (failed == records.size() && only_error && one_error) {
    reply.status = status_of(*only_error);
    if (reply.status == 503 || reply.status == 429) reply.headers.emplace_back("Retry-After", "1");
  }
  co_return reply;
}

}  // namespace brokerd::http
