#include "http/route_support.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <charconv>

#include "brokerd/net/request.h"
#include "brokerd/protocol/messages/metadata_request.h"

namespace brokerd::http {

namespace json = boost::json;
namespace asio = boost::asio;

std::optional<std::string> percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return std::nullopt;
      unsigned value = 0;
      auto [end, ec] = std::from_chars(text.data() + i + 1, text.data() + i + 3, value, 16);
      if (ec != std::errc() || end != text.data() + i + 3) return std::nullopt;
      out.push_back(static_cast<char>(value));
      i += 2;
    } else if (c == '+') {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::optional<Query> parse_query(std::string_view query) {
  Query q;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    auto name = percent_decode(pair.substr(0, eq));
    auto value = percent_decode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
    if (!name || !value) return std::nullopt;
    q.params[*name] = *value;
  }
  return q;
}

std::optional<int64_t> Query::integer(std::string_view name, int64_t min, int64_t max, std::string& error) const {
  auto it = params.find(name);
  if (it == params.end()) return std::nullopt;
  int64_t value = 0;
  const auto& s = it->second;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || value < min || value > max) {
    error = "query parameter " + std::string(name) + " must be an integer from " + std::to_string(min) + " to " +
            std::to_string(max);
    return std::nullopt;
  }
  return value;
}

std::optional<std::string_view> Query::text(std::string_view name) const {
  auto it = params.find(name);
  if (it == params.end()) return std::nullopt;
  return std::string_view(it->second);
}

std::variant<json::object, Reply> json_object_of(std::string_view body) {
  json::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec) return bad_request("the body is not JSON: " + ec.message());
  if (!v.is_object()) return bad_request("the body must be a JSON object");
  return std::move(v.as_object());
}

void Fields::fail(std::string_view name, std::string_view why) {
  if (error.empty()) error = where_ + (where_.empty() ? "" : ": ") + "\"" + std::string(name) + "\" " + std::string(why);
}

const json::value* Fields::raw(std::string_view name) const { return o_.if_contains(name); }

std::optional<std::string> Fields::text(std::string_view name, bool required) {
  const json::value* v = raw(name);
  if (!v || v->is_null()) {
    if (required) fail(name, "is required");
    return std::nullopt;
  }
  if (!v->is_string()) {
    fail(name, "must be a string");
    return std::nullopt;
  }
  return std::string(v->as_string());
}

std::optional<int64_t> Fields::integer(std::string_view name, bool required, int64_t min, int64_t max) {
  const json::value* v = raw(name);
  if (!v || v->is_null()) {
    if (required) fail(name, "is required");
    return std::nullopt;
  }
  int64_t value = 0;
  if (v->is_int64()) {
    value = v->as_int64();
  } else if (v->is_uint64() && v->as_uint64() <= static_cast<uint64_t>(INT64_MAX)) {
    value = static_cast<int64_t>(v->as_uint64());
  } else {
    fail(name, "must be an integer");
    return std::nullopt;
  }
  if (value < min || value > max) {
    fail(name, "must be from " + std::to_string(min) + " to " + std::to_string(max));
    return std::nullopt;
  }
  return value;
}

std::optional<bool> Fields::boolean(std::string_view name) {
  const json::value* v = raw(name);
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_bool()) {
    fail(name, "must be true or false");
    return std::nullopt;
  }
  return v->as_bool();
}

asio::awaitable<std::variant<protocol::MetadataResponse::MetadataResponseTopic, Reply>> describe_topic(
    ApiContext& ctx, Call& call, const std::string& topic) {
  protocol::MetadataRequest req;
  req.topics = std::vector<protocol::MetadataRequest::MetadataRequestTopic>(1);
  req.topics->front().name = topic;
  req.allow_auto_topic_creation = false;
  auto resp = co_await ctx.kafka.here<protocol::MetadataResponse>(call.connection, req, kMetadataVersion);
  if (resp.topics.size() != 1) co_return error_reply(ErrorCode::unknown_server_error, "no answer for the topic");
  auto& t = resp.topics.front();
  const auto code = static_cast<ErrorCode>(t.error_code);
  if (code == ErrorCode::unknown_topic_or_partition) co_return not_found("unknown topic " + topic);
  if (code == ErrorCode::topic_authorization_failed)
    co_return error_reply(code, "not authorized to describe topic " + topic);
  if (code != ErrorCode::none && code != ErrorCode::leader_not_available)
    co_return error_reply(code, "topic " + topic);
  co_return std::move(t);
}

json::object topic_json(const protocol::MetadataResponse::MetadataResponseTopic& t) {
  json::object o;
  o["name"] = t.name.value_or("");
  o["id"] = t.topic_id.to_string();
  json::array partitions;
  std::vector<const protocol::MetadataResponse::MetadataResponsePartition*> sorted;
  for (const auto& p : t.partitions) sorted.push_back(&p);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->partition_index < b->partition_index; });
  for (const auto* p : sorted) {
    json::object po;
    po["partition"] = p->partition_index;
    po["leader"] = p->leader_id;
    json::array replicas(p->replica_nodes.begin(), p->replica_nodes.end());
    json::array isr(p->isr_nodes.begin(), p->isr_nodes.end());
    po["replicas"] = std::move(replicas);
    po["isr"] = std::move(isr);
    partitions.push_back(std::move(po));
  }
  o["partitions"] = std::move(partitions);
  return o;
}

void QuotaWaits::wait(const std::string& principal, int32_t throttle_time_ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(throttle_time_ms);
  std::lock_guard lock(mu_);
  auto& at = until_[principal];
  at = std::max(at, until);
}

std::chrono::milliseconds QuotaWaits::remaining(const std::string& principal) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mu_);
  auto it = until_.find(principal);
  if (it == until_.end()) return std::chrono::milliseconds(0);
  if (it->second <= now) {
    until_.erase(it);
    return std::chrono::milliseconds(0);
  }
  return std::chrono::duration_cast<std::chrono::milliseconds>(it->second - now);
}

void mute_for(ApiContext& ctx, const net::ConnectionContext& connection, int32_t throttle_time_ms) {
  if (throttle_time_ms > 0 && ctx.quota_waits) ctx.quota_waits->wait(connection.principal, throttle_time_ms);
}

Reply json_reply(const json::value& v, unsigned status) {
  Reply r;
  r.status = status;
  r.body = json::serialize(v);
  return r;
}

}  // namespace brokerd::http
