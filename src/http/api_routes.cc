#include "http/api_routes.h"

#include <charconv>
#include <chrono>
#include <vector>

#include "brokerd/net/request.h"
#include "http/basic_auth.h"

namespace brokerd::http {

namespace asio = boost::asio;

namespace {

// The path's segments after "/v1/", each percent-decoded; nullopt when malformed.
std::optional<std::vector<std::string>> segments_of(std::string_view path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    auto part = percent_decode(path.substr(start, slash - start));
    if (!part) return std::nullopt;
    out.push_back(std::move(*part));
    start = slash + 1;
  }
  return out;
}

Reply method_not_allowed(std::string_view allow) {
  Reply r = error_reply(ErrorCode::invalid_request, "method not allowed here; allowed: " + std::string(allow));
  r.status = 405;
  r.headers.emplace_back("Allow", std::string(allow));
  return r;
}

}  // namespace

asio::awaitable<Reply> ApiRoutes::answer(Call& call) {
  const auto started = std::chrono::steady_clock::now();
  Route chosen = Route::none;
  Reply reply = co_await route(call, chosen);
  if (metrics_)
    metrics_->observe(chosen, reply.status, call.body.size(), reply.body.size(), std::chrono::steady_clock::now() - started);
  co_return reply;
}

asio::awaitable<Reply> ApiRoutes::route(Call& call, Route& chosen) {
  if (ctx_.basic) {
    // Each request names its user; one without valid credentials never acts as anyone.
    auto principal = co_await ctx_.basic->principal_of(call.authorization);
    if (!principal) {
      Reply r = error_reply(ErrorCode::sasl_authentication_failed,
                            call.authorization.empty() ? "credentials required (HTTP Basic)" : "wrong user name or password");
      r.headers.emplace_back("WWW-Authenticate", "Basic realm=\"brokerd\", charset=\"UTF-8\"");
      co_return r;
    }
    call.connection.principal = std::move(*principal);
  } else if (ctx_.mtls) {
    if (call.certificate_principal.empty()) {
      co_return error_reply(ErrorCode::sasl_authentication_failed,
                            "a client certificate is required (https with http.authentication=mtls)");
    }
    call.connection.principal = std::string(call.certificate_principal);
  }
  // A principal over its quota was told to wait: until then its requests are answered 429.
  if (ctx_.quota_waits) {
    if (const auto wait = ctx_.quota_waits->remaining(call.connection.principal); wait.count() > 0)
      co_return error_reply(ErrorCode::throttling_quota_exceeded, "over a quota: retry later",
                            static_cast<int>((wait.count() + 999) / 1000));
  }
  std::string_view target = call.target;
  std::string_view query_text;
  if (auto q = target.find('?'); q != std::string_view::npos) {
    query_text = target.substr(q + 1);
    target = target.substr(0, q);
  }
  constexpr std::string_view kPrefix = "/v1/";
  if (target.substr(0, kPrefix.size()) != kPrefix) co_return not_found("no such route: " + std::string(target));
  auto segments = segments_of(target.substr(kPrefix.size()));
  auto query = parse_query(query_text);
  if (!segments || !query) co_return bad_request("malformed percent-encoding in the path or query");
  const auto& s = *segments;
  const std::string_view method = call.method;
  const bool get = method == "GET", post = method == "POST";

  if (s.size() == 1 && s[0] == "topics") {
    if (!post) co_return method_not_allowed("POST");
    chosen = Route::create_topic;
    co_return co_await create_topic(ctx_, call);
  }
  if (s.size() == 3 && s[0] == "topics" && s[2] == "metadata") {
    if (!get) co_return method_not_allowed("GET");
    chosen = Route::topic_metadata;
    co_return co_await topic_metadata(ctx_, call, s[1]);
  }
  if (s.size() == 3 && s[0] == "topics" && s[2] == "records") {
    if (!post) co_return method_not_allowed("POST");
    chosen = Route::produce;
    co_return co_await produce_records(ctx_, call, s[1]);
  }
  if (s.size() == 5 && s[0] == "topics" && s[2] == "partitions" && s[4] == "records") {
    if (!get) co_return method_not_allowed("GET");
    int32_t partition = -1;
    auto [end, ec] = std::from_chars(s[3].data(), s[3].data() + s[3].size(), partition);
    if (ec != std::errc() || end != s[3].data() + s[3].size() || partition < 0)
      co_return bad_request("the partition must be a non-negative integer");
    chosen = Route::read;
    co_return co_await read_records(ctx_, call, s[1], partition, *query);
  }
  if (s.size() == 3 && s[0] == "groups" && s[2] == "positions") {
    chosen = get ? Route::read_positions : Route::save_positions;
    if (get) co_return co_await read_positions(ctx_, call, s[1]);
    if (post) co_return co_await save_positions(ctx_, call, s[1]);
    co_return method_not_allowed("GET, POST");
  }
  co_return not_found("no such route: " + std::string(target));
}

}  // namespace brokerd::http
