// The only translation unit that includes Beast: it is heavy to compile, and nothing else
// needs HTTP.
#include "brokerd/metrics/http_server.h"

#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <charconv>
#include <chrono>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "brokerd/common/logger.h"
#include "brokerd/metrics/registry.h"
#include "brokerd/net/bound_address.h"

namespace brokerd::metrics {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr auto kIdleTimeout = std::chrono::seconds(30);
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

}  // namespace

HttpAddress parse_http_address(std::string_view text) {
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos) throw std::invalid_argument("'" + std::string(text) + "' is not host:port");
  std::string_view host = text.substr(0, colon);
  std::string_view port = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value > 65535)
    throw std::invalid_argument("'" + std::string(text) + "' has no valid port");
  return {std::string(host), static_cast<uint16_t>(value)};
}

struct HttpServer::Impl {
  Impl(Registry& r, HttpAddress a, std::shared_ptr<net::BoundAddress> b)
      : registry(r), address(std::move(a)), bound(std::move(b)) {}
  Registry& registry;
  HttpAddress address;
  std::shared_ptr<net::BoundAddress> bound;
  asio::io_context ioc{1};
  tcp::acceptor acceptor{ioc};
  std::thread thread;
  bool started = false;
  bool stopped = false;
};

namespace {

http::response<http::string_body> answer(unsigned version, bool keep_alive, http::status status,
                                         std::string_view content_type, std::string body) {
  http::response<http::string_body> res{status, version};
  res.set(http::field::server, "brokerd");
  res.set(http::field::content_type, content_type);
  res.keep_alive(keep_alive);
  res.body() = std::move(body);
  res.prepare_payload();
  return res;
}

asio::awaitable<void> serve(Registry& registry, const HttpServer& owner, tcp::socket socket) {
  static auto log = module_logger("metrics");
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  while (true) {
    stream.expires_after(kIdleTimeout);
    http::request<http::string_body> req;
    auto [rec, rn] = co_await http::async_read(stream, buffer, req, kTuple);
    if (rec) break;
    std::string_view target(req.target().data(), req.target().size());
    target = target.substr(0, target.find('?'));
    const unsigned version = req.version();
    const bool keep_alive = req.keep_alive();
    http::response<http::string_body> res;
    if (req.method() != http::verb::get) {
      res = answer(version, keep_alive, http::status::method_not_allowed, "text/plain", "only GET\n");
      res.set(http::field::allow, "GET");
    } else if (target == "/metrics") {
      std::string body;
      std::string error;
      try {
        body = co_await registry.scrape();
      } catch (const std::exception& e) {
        error = e.what();
      }
      if (error.empty()) {
        res = answer(version, keep_alive, http::status::ok, kTextContentType, std::move(body));
      } else {
        log->warn("metrics scrape failed: {}", error);
        res = answer(version, keep_alive, http::status::internal_server_error, "text/plain", error + "\n");
      }
    } else if (target == "/health") {
      res = answer(version, keep_alive, http::status::ok, "text/plain", "ok\n");
    } else if (target == "/ready") {
      res = owner.ready() ? answer(version, keep_alive, http::status::ok, "text/plain", "ready\n")
                          : answer(version, keep_alive, http::status::service_unavailable, "text/plain", "not ready\n");
    } else {
      res = answer(version, keep_alive, http::status::not_found, "text/plain", "not found: /metrics, /health, /ready\n");
    }
    stream.expires_after(kIdleTimeout);
    auto [wec, wn] = co_await http::async_write(stream, res, kTuple);
    if (wec || !res.keep_alive()) break;
  }
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

asio::awaitable<void> accept_loop(HttpServer::Impl& impl, const HttpServer& owner) {
  while (impl.acceptor.is_open()) {
    auto [ec, socket] = co_await impl.acceptor.async_accept(kTuple);
    if (ec) {
      if (ec == asio::error::operation_aborted || !impl.acceptor.is_open()) co_return;
      continue;  // e.g. out of descriptors: keep serving
    }
    asio::co_spawn(impl.ioc, serve(impl.registry, owner, std::move(socket)), asio::detached);
  }
}

}  // namespace

HttpServer::HttpServer(Registry& registry, HttpAddress address, std::shared_ptr<net::BoundAddress> bound)
    : impl_(std::make_unique<Impl>(registry, std::move(address), std::move(bound))) {}

HttpServer::~HttpServer() { stop(); }

void HttpServer::start() {
  if (impl_->started) return;
  auto& a = impl_->address;
  boost::system::error_code ec;
  if (impl_->bound) {
    const int fd = impl_->bound->release();
    if (fd < 0) throw std::logic_error("metrics.listener: its bound address was already taken");
    impl_->acceptor.assign(impl_->bound->family() == AF_INET6 ? tcp::v6() : tcp::v4(), fd, ec);
    if (ec) ::close(fd);
  } else {
    asio::ip::address ip;
    if (a.host.empty()) {
      ip = asio::ip::address_v4::any();
    } else {
      ip = asio::ip::make_address(a.host, ec);
      if (ec) {
        tcp::resolver resolver(impl_->ioc);
        ip = resolver.resolve(a.host, std::to_string(a.port)).begin()->endpoint().address();
        ec.clear();
      }
    }
    tcp::endpoint ep(ip, a.port);
    impl_->acceptor.open(ep.protocol(), ec);
    if (!ec) impl_->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) impl_->acceptor.bind(ep, ec);
  }
  if (!ec) impl_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    throw std::system_error(ec.value(), std::system_category(),
                            "metrics.listener " + a.host + ":" + std::to_string(a.port));
  }
  impl_->started = true;
  asio::co_spawn(impl_->ioc, accept_loop(*impl_, *this), asio::detached);
  impl_->thread = std::thread([this] {
    try {
      impl_->ioc.run();
    } catch (const std::exception& e) {
      module_logger("metrics")->error("metrics endpoint stopped: {}", e.what());
    }
  });
}

void HttpServer::stop() {
  if (!impl_->started || impl_->stopped) return;
  impl_->stopped = true;
  ready_.store(false, std::memory_order_relaxed);
  // Connections and a scrape waiting for the shards are dropped with the io_context.
  impl_->ioc.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
  boost::system::error_code ignored;
  impl_->acceptor.close(ignored);
}

uint16_t HttpServer::port() const {
  boost::system::error_code ec;
  auto ep = impl_->acceptor.local_endpoint(ec);
  return ec ? 0 : ep.port();
}

}  // namespace brokerd::metrics
