#pragma once
// The HTTP listeners of the platform's /v1 API (http.listeners): accept connections, spread
// them over the reactor shards, read HTTP/1.1 requests with bounded headers and bodies
// (keep-alive and pipelining: one request at a time per connection, in order), hand each to
// the routes and write the reply. A request that is malformed, too large or too slow to
// arrive fails its connection alone.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "brokerd/http/routes.h"

namespace brokerd::net {
class BoundAddress;
class ReactorPool;
class TlsServerContext;
}  // namespace brokerd::net

namespace brokerd::http {

struct HttpListener {
  std::string host;  // "" or "0.0.0.0": every interface
  uint16_t port = 0;
  bool https = false;
  // Bound ahead (net/bound_address.h), so that a taken port stops the node at start.
  std::shared_ptr<net::BoundAddress> bound;
  // https: the TLS every connection handshakes first (listener.name.https.ssl.*).
  std::shared_ptr<net::TlsServerContext> tls;
};

// `http://HOST:PORT` and `https://HOST:PORT`, comma separated (http.listeners). Throws
// std::invalid_argument naming the bad entry.
std::vector<HttpListener> parse_http_listeners(std::string_view text);

struct ServerSettings {
  // The whole request (headers and body) must arrive within this once its first byte has.
  int64_t request_timeout_ms = 30000;
  // A keep-alive connection with no request for this long is closed.
  int64_t idle_timeout_ms = 600000;
  size_t max_header_bytes = 16 * 1024;
  size_t max_body_bytes = 16 * 1024 * 1024;
  // Open HTTP connections at once; one past it is closed at accept.
  int64_t max_connections = 10000;
};

class ApiServer {
 public:
  // The pool and the routes outlive the server.
  ApiServer(net::ReactorPool& reactors, Routes& routes, std::vector<HttpListener> listeners, ServerSettings settings);
  ~ApiServer();  // stop()
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Listens on every listener and starts accepting; the reactors must be running.
  void start();
  // Stops accepting and closes every connection once its request in flight is answered (at
  // most a few seconds). Call from outside the reactor threads.
  void stop();
  uint16_t port(size_t listener_index = 0) const;
  size_t connection_count() const;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace brokerd::http
