#pragma once
// The platform's /v1 HTTP API on this node (http.listeners): its server, its routes and the
// connections through which it reaches the other nodes, put together.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "brokerd/http/api_server.h"
#include "brokerd/security/sasl_client.h"

namespace brokerd::metadata { class MetadataStore; }
namespace brokerd::metrics { class Registry; }
namespace brokerd::net {
class BlockingPool;
class Dispatcher;
class ReactorPool;
}  // namespace brokerd::net

namespace brokerd::http {

struct ApiSettings {
  ServerSettings server;
  int32_t node_id = 0;
  // What this node presents to the other brokers' inter-broker listener.
  security::ClientCredentials inter_broker_credentials;
  // http.authentication: "none", "basic" (HTTP Basic against the SCRAM credentials) or "mtls"
  // (the principal of the client's certificate, on https listeners).
  std::string authentication = "none";
  // Test builds only (inject.bug=http-hash-encoded-key): a base64 key is placed by the hash of
  // its text instead of its bytes, which the fault campaign's http workload must catch.
  bool hash_encoded_key = false;
};

class HttpApi {
 public:
  // `dispatcher` runs the Kafka requests the routes make: the node's own, so that ACLs,
  // quotas and tenant limits apply as for Kafka clients. Everything outlives the API.
  // Its metrics go to `registry` (route_metrics.h).
  HttpApi(net::ReactorPool& reactors, net::BlockingPool& blocking, net::Dispatcher& dispatcher,
          const metadata::MetadataStore& metadata, metrics::Registry& registry, std::vector<HttpListener> listeners,
          ApiSettings settings);
  ~HttpApi();
  HttpApi(const HttpApi&) = delete;
  HttpApi& operator=(const HttpApi&) = delete;

  void start();
  // Stops accepting, ends the connections and closes those to other nodes. Not on a shard.
  void stop();
  uint16_t port(size_t listener_index = 0) const;

 private:
  struct Parts;
  std::unique_ptr<Parts> parts_;
};

}  // namespace brokerd::http
