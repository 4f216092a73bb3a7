#pragma once
// Kafka-protocol TCP listeners: accept connections, spread them over the reactor shards,
// read framed requests, hand them to a Dispatcher and write responses in request order.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "brokerd/common/security_protocol.h"
#include "brokerd/net/bound_address.h"
#include "brokerd/net/request.h"
#include "brokerd/net/tls.h"

namespace brokerd::net {

class ReactorPool;
class BlockingPool;

struct Listener {
  std::string name;  // e.g. "PLAINTEXT"
  std::string host;  // address or host name; "" or "0.0.0.0" means every interface
  uint16_t port = 0; // 0: any free port (read it back with Server::port())
  // SASL_*: connections must authenticate before any request but ApiVersions and SASL's own.
  SecurityProtocol security = SecurityProtocol::plaintext;
  // SSL, SASL_SSL: the TLS every connection handshakes first.
  std::shared_ptr<TlsServerContext> tls;
  // The address bound ahead (bound_address.h), which start() listens on; else start() binds.
  std::shared_ptr<BoundAddress> bound;
};

struct ServerConfig {
  // A frame larger than this (or smaller than the 8-byte header prefix) closes the connection.
  int64_t socket_request_max_bytes = 100 * 1024 * 1024;
  // The same bound for a connection that has not authenticated yet (sasl.server.max.receive.size).
  int64_t unauthenticated_request_max_bytes = 512 * 1024;
  // A connection with no traffic and nothing in flight for this long is closed.
  int64_t connections_max_idle_ms = 600000;
  // Per connection: the reader pauses while this much request data or this many requests
  // wait for their responses to be written.
  int64_t max_inflight_bytes_per_connection = 64 * 1024 * 1024;
  int64_t max_inflight_requests_per_connection = 100;
  // Node-wide: request bytes read but not yet answered, over all connections.
  int64_t queued_max_request_bytes = 512 * 1024 * 1024;
  // Per principal: the same count over the connections of one principal. A principal at its
  // bound waits even while the node has room, so that one team cannot spend the node's
  // budget and leave the others waiting for it. 0: no bound of its own.
  int64_t queued_max_request_bytes_per_principal = 128 * 1024 * 1024;
  // stop(): how long in-flight requests may take to finish before connections are cut.
  int64_t shutdown_drain_ms = 10000;
  // Admission, checked at accept: a connection past any of these is closed at once, before
  // it reads anything. Open connections over all listeners (max.connections), from one
  // client address (max.connections.per.ip, with per-address exceptions), and accepted per
  // second on each listener (max.connection.creation.rate). Negative: no bound.
  int64_t max_connections = -1;
  int64_t max_connections_per_ip = -1;
  std::map<std::string, int64_t> max_connections_per_ip_overrides;  // by address text
  int64_t max_connection_creation_rate = -1;
};

class Server {
 public:
  // The pools and the dispatcher must outlive the server; destroy the server before the pool.
  Server(ReactorPool& reactors, BlockingPool& blocking, Dispatcher& dispatcher,
         std::vector<Listener> listeners, ServerConfig config = {});
  ~Server();  // stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds every listener not bound ahead and listens on all (throws std::system_error naming
  // the address if one cannot be bound), then starts accepting. The reactor pool must be running.
  void start();
  // Stops accepting, lets in-flight requests finish and their responses be written (at most
  // shutdown_drain_ms), then closes every connection. Call from outside the reactor threads;
  // from a reactor thread it only initiates the shutdown.
  void stop();

  // The bound port of a listener, known after start().
  uint16_t port(std::string_view listener_name) const;
  uint16_t port(size_t listener_index = 0) const;

  // Connections currently open (for tests and metrics).
  size_t connection_count() const;
  // Connections closed at accept by the admission bounds since start (for metrics).
  uint64_t refused_connection_count() const;
  // Request bytes queued node-wide (for tests and metrics).
  int64_t queued_request_bytes() const;

  struct State;

 private:
  std::shared_ptr<State> state_;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace brokerd::net
