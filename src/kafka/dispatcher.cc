#include "brokerd/kafka/dispatcher.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>

#include "brokerd/common/logger.h"
#include "brokerd/metrics/broker_metrics.h"
#include "brokerd/protocol/messages/api_table.h"
#include "brokerd/security/sasl_server.h"
#include "kafka/handler.h"
#include "kafka/quotas.h"
#include "kafka/served_apis.h"

namespace brokerd::kafka {
namespace {

net::Response close_connection() { return net::Response{{}, false, true}; }

const char* peer_of(const net::Request& req) { return req.connection ? req.connection->peer.c_str() : "?"; }

}  // namespace

KafkaDispatcher::KafkaDispatcher(Services services) : services_(services) {
  for (const auto& api : served_apis()) {
    const auto* info = protocol::find_api(api.api_key);
    services_.metrics.add_api(api.api_key, info ? info->name : "unknown");
  }
}

boost::asio::awaitable<net::Response> KafkaDispatcher::dispatch(net::Request req) {
  static auto log = module_logger("kafka");
  const auto started = std::chrono::steady_clock::now();
  auto& metrics = services_.metrics.api(req.api_key);
  metrics.requests.add();
  const ServedApi* api = find_served_api(req.api_key);
  if (!api) {
    metrics.errors.add();
    log->warn("closing connection from {}: API key {} is not served (client {})", peer_of(req), req.api_key,
              req.client_id.value_or(""));
    co_return close_connection();
  }
  if (const char* why = security::unauthenticated(req)) {
    metrics.errors.add();
    log->info("closing connection from {}: API key {} sent {}", peer_of(req), req.api_key, why);
    co_return close_connection();
  }
  if (req.api_version == net::kBareSaslToken && req.connection && req.connection->bare_sasl_tokens) {
    protocol::Reader token(req.frame.data, req.frame.owner);
    HandlerContext ctx{req, token, req.api_version, services_};
    co_return co_await handle_sasl_authenticate(ctx);
  }
  if (req.api_version < api->min_version || req.api_version > api->max_version) {
    metrics.errors.add();
    if (req.api_key == 18) co_return api_versions_unsupported(req);
    log->warn("closing connection from {}: API key {} version {} is outside {}-{}", peer_of(req), req.api_key,
              req.api_version, api->min_version, api->max_version);
    co_return close_connection();
  }
  protocol::Reader body(req.frame.data.subspan(req.header_end), req.frame.owner);
  try {
    protocol::skip_request_header_tags(body, req.api_key, req.api_version);
    HandlerContext ctx{req, body, req.api_version, services_};
    // The handler starts now and runs to its first suspension before this coroutine
    // returns control: produce ordering depends on it (see net/request.h). co_spawn on a
    // reactor's executor starts it inline, as a direct co_await does.
    net::Response response;
    if (auto request_quota = request_time_quota(ctx)) {
      ctx.request_time = &*request_quota;
      auto run = api->handler(ctx);
      auto ex = net::charging(co_await boost::asio::this_coro::executor, request_quota->account);
      response = co_await boost::asio::co_spawn(ex, std::move(run), boost::asio::use_awaitable);
      charge_request_rest(ctx);
    } else {
      response = co_await api->handler(ctx);
    }
    metrics.latency.observe_nanos(static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started).count()));
    co_return std::move(response);
  } catch (const protocol::DecodeError& e) {
    metrics.errors.add();
    log->warn("closing connection from {}: malformed request (API key {} v{}): {}", peer_of(req), req.api_key,
              req.api_version, e.what());
    co_return close_connection();
  } catch (...) {
    metrics.errors.add();  // the connection closes
    throw;
  }
}

}  // namespace brokerd::kafka
