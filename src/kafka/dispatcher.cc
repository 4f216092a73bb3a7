#include "brokerd/kafka/dispatcher.h"

#include "brokerd/common/logger.h"
#include "brokerd/protocol/messages/api_table.h"
#include "kafka/handler.h"
#include "kafka/served_apis.h"

namespace brokerd::kafka {
namespace {

Handler handler_for(int16_t api_key) {
  switch (api_key) {
    case 0: return handle_produce;
    case 1: return handle_fetch;
    case 2: return handle_list_offsets;
    case 3: return handle_metadata;
    case 18: return handle_api_versions;
    case 19: return handle_create_topics;
    case 20: return handle_delete_topics;
    case 21: return handle_delete_records;
    case 32: return handle_describe_configs;
    case 33: return handle_alter_configs;
    case 37: return handle_create_partitions;
    case 44: return handle_incremental_alter_configs;
    case 60: return handle_describe_cluster;
    default: return nullptr;
  }
}

net::Response close_connection() { return net::Response{{}, false, true}; }

const char* peer_of(const net::Request& req) { return req.connection ? req.connection->peer.c_str() : "?"; }

}  // namespace

boost::asio::awaitable<net::Response> KafkaDispatcher::dispatch(net::Request req) {
  static auto log = module_logger("kafka");
  const ServedApi* api = find_served_api(req.api_key);
  Handler handler = handler_for(req.api_key);
  if (!api || !handler) {
    log->warn("closing connection from {}: API key {} is not served (client {})", peer_of(req), req.api_key,
              req.client_id.value_or(""));
    co_return close_connection();
  }
  if (req.api_version < api->min_version || req.api_version > api->max_version) {
    if (req.api_key == 18) co_return api_versions_unsupported(req);
    log->warn("closing connection from {}: API key {} version {} is outside {}-{}", peer_of(req), req.api_key,
              req.api_version, api->min_version, api->max_version);
    co_return close_connection();
  }
  protocol::Reader body(req.frame.data.subspan(req.header_end), req.frame.owner);
  try {
    if (protocol::request_header_version(req.api_key, req.api_version) >= 2) {
      std::vector<protocol::TaggedField> ignored;
      body.tagged_fields(ignored, [](uint32_t, protocol::Reader&) { return false; });
    }
    HandlerContext ctx{req, body, req.api_version, services_};
    // The handler starts now and runs to its first suspension before this coroutine
    // returns control: produce ordering depends on it (see net/request.h).
    co_return co_await handler(ctx);
  } catch (const protocol::DecodeError& e) {
    log->warn("closing connection from {}: malformed request (API key {} v{}): {}", peer_of(req), req.api_key,
              req.api_version, e.what());
    co_return close_connection();
  }
}

}  // namespace brokerd::kafka
