#include "brokerd/http/http_api.h"

#include "http/api_routes.h"
#include "http/basic_auth.h"
#include "http/kafka_calls.h"
#include "http/node_links.h"

namespace brokerd::http {

struct HttpApi::Parts {
  Parts(net::ReactorPool& reactors, net::BlockingPool& blocking, net::Dispatcher& dispatcher,
        const metadata::MetadataStore& metadata, metrics::Registry& registry, std::vector<HttpListener> listeners,
        ApiSettings settings)
      : metrics(registry),
        basic(metadata, blocking),
        links(reactors, metadata, settings.node_id, settings.inter_broker_credentials),
        calls(dispatcher, links),
        routes(ApiContext{calls, metadata, settings.node_id, settings.server.request_timeout_ms,
                          settings.authentication == "basic" ? &basic : nullptr, settings.authentication == "mtls",
                          settings.hash_encoded_key,
                          &quota_waits},
               &metrics),
        server(reactors, routes, std::move(listeners), settings.server) {}
  RouteMetrics metrics;
  BasicAuthenticator basic;
  QuotaWaits quota_waits;
  NodeLinks links;
  KafkaCalls calls;
  ApiRoutes routes;
  ApiServer server;
};

HttpApi::HttpApi(net::ReactorPool& reactors, net::BlockingPool& blocking, net::Dispatcher& dispatcher,
                 const metadata::MetadataStore& metadata, metrics::Registry& registry,
                 std::vector<HttpListener> listeners, ApiSettings settings)
    : parts_(std::make_unique<Parts>(reactors, blocking, dispatcher, metadata, registry, std::move(listeners),
                                     std::move(settings))) {}

HttpApi::~HttpApi() = default;

void HttpApi::start() { parts_->server.start(); }

void HttpApi::stop() {
  parts_->server.stop();
  parts_->links.stop();
}

uint16_t HttpApi::port(size_t listener_index) const { return parts_->server.port(listener_index); }

}  // namespace brokerd::http
