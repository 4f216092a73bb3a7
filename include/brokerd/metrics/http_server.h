#pragma once
// The operator's HTTP endpoint (metrics.listener): GET /metrics (Prometheus text), /health
// (the process is alive: 200 "ok") and /ready (200 once the broker serves clients, 503
// before and while it shuts down). It runs on a thread and io_context of its own, so a
// scrape never runs on a reactor; the registry's collectors reach the shards by fan-out.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace brokerd::net {
class BoundAddress;
}

namespace brokerd::metrics {

class Registry;

struct HttpAddress {
  std::string host;
  uint16_t port = 0;
};
// "host:port" or "[v6]:port"; throws std::invalid_argument with a message naming the problem.
HttpAddress parse_http_address(std::string_view text);

class HttpServer {
 public:
  // With `bound`, start() listens on that socket, bound ahead (net/bound_address.h).
  HttpServer(Registry& registry, HttpAddress address, std::shared_ptr<net::BoundAddress> bound = nullptr);
  ~HttpServer();  // stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds (throws std::system_error when the address cannot be bound) and starts the thread.
  void start();
  // Closes the listener and every connection, and joins the thread. A scrape waiting for
  // the shards is abandoned.
  void stop();

  void set_ready(bool ready) { ready_.store(ready, std::memory_order_relaxed); }
  bool ready() const { return ready_.load(std::memory_order_relaxed); }
  uint16_t port() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  std::atomic<bool> ready_{false};
};

}  // namespace brokerd::metrics
