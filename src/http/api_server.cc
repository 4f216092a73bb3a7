// The HTTP transport of the /v1 API. With the metrics endpoint, the only translation units
// that include Beast.
#include "brokerd/http/api_server.h"

#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "brokerd/common/logger.h"
#include "brokerd/metrics/http_server.h"
#include "brokerd/net/bound_address.h"
#include "brokerd/net/reactor_pool.h"
#include "brokerd/net/request.h"
#include "brokerd/net/tls.h"

namespace brokerd::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
// Connection ids of the HTTP listeners, apart from the Kafka listeners' (which count from 1).
std::atomic<uint64_t> next_connection_id{uint64_t{1} << 62};

}  // namespace

std::vector<HttpListener> parse_http_listeners(std::string_view text) {
  std::vector<HttpListener> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view entry = text.substr(start, comma - start);
    while (!entry.empty() && entry.front() == ' ') entry.remove_prefix(1);
    while (!entry.empty() && entry.back() == ' ') entry.remove_suffix(1);
    start = comma + 1;
    if (entry.empty()) {
      if (comma == text.size()) break;
      continue;
    }
    constexpr std::string_view kHttp = "http://", kHttps = "https://";
    const bool https = entry.substr(0, kHttps.size()) == kHttps;
    if (!https && entry.substr(0, kHttp.size()) != kHttp)
      throw std::invalid_argument("'" + std::string(entry) + "' is not http://HOST:PORT or https://HOST:PORT");
    const auto address = metrics::parse_http_address(entry.substr(https ? kHttps.size() : kHttp.size()));
    out.push_back({address.host, address.port, https, nullptr, nullptr});
    if (comma == text.size()) break;
  }
  return out;
}

struct ApiServer::State : std::enable_shared_from_this<ApiServer::State> {
  State(net::ReactorPool& r, Routes& rt, std::vector<HttpListener> l, ServerSettings s)
      : reactors(r), routes(rt), listeners(std::move(l)), settings(s) {}

  net::ReactorPool& reactors;
  Routes& routes;
  std::vector<HttpListener> listeners;
  ServerSettings settings;
  std::vector<std::unique_ptr<tcp::acceptor>> acceptors;
  std::atomic<size_t> next_shard{0};
  std::atomic<int64_t> connections{0};
  std::atomic<bool> stopping{false};
  // The open connections' sockets, so that stop() can close them (touched under mu).
  std::mutex mu;
  std::set<tcp::socket*> open;
  std::shared_ptr<spdlog::logger> log = module_logger("http");
};

namespace {

bhttp::response<bhttp::string_body> to_response(Reply reply, unsigned version, bool keep_alive) {
  bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(reply.status), version};
  res.set(bhttp::field::server, "brokerd");
  res.set(bhttp::field::content_type, reply.content_type);
  for (auto& [name, value] : reply.headers) res.set(name, value);
  res.keep_alive(keep_alive);
  res.body() = std::move(reply.body);
  res.prepare_payload();
  return res;
}

Reply plain_error(unsigned status, std::string_view error, std::string_view message) {
  Reply r;
  r.status = status;
  r.body = "{\"error_code\":-1,\"error\":\"" + std::string(error) + "\",\"message\":\"" + std::string(message) + "\"}";
  return r;
}

// What a failed read answers before the connection closes, if anything.
std::optional<Reply> read_failure(const beast::error_code& ec) {
  if (ec == bhttp::error::body_limit) return plain_error(413, "record_list_too_large", "the request body is too large");
  if (ec == bhttp::error::header_limit) return plain_error(431, "invalid_request", "the request headers are too large");
  if (ec.category() == beast::error_code(bhttp::error::bad_method).category() && ec != bhttp::error::end_of_stream &&
      ec != bhttp::error::partial_message)
    return plain_error(400, "invalid_request", "malformed HTTP request");
  return std::nullopt;  // the peer went away or was too slow
}

// Requests one after the other on `stream` (the TCP stream itself, or TLS over it), until
// the client goes away, sends something wrong, is too slow, or the server stops.
template <typename Stream>
asio::awaitable<void> serve_requests(std::shared_ptr<ApiServer::State> s, Stream& stream, beast::tcp_stream& lowest,
                                     net::ConnectionContext& conn, const std::string& certificate_principal) {
  beast::flat_buffer buffer;
  const auto idle = std::chrono::milliseconds(s->settings.idle_timeout_ms);
  const auto request_time = std::chrono::milliseconds(s->settings.request_timeout_ms);
  while (!s->stopping.load()) {
    // An idle keep-alive connection may wait long for its next request; once a byte of it has
    // come, the whole request must arrive within the request timeout (slow senders are cut).
    if (buffer.size() == 0) {
      lowest.expires_after(idle);
      auto [ec, n] = co_await stream.async_read_some(buffer.prepare(4096), kTuple);
      if (ec) break;
      buffer.commit(n);
    }
    lowest.expires_after(request_time);
    bhttp::request_parser<bhttp::string_body> parser;
    parser.header_limit(static_cast<uint32_t>(s->settings.max_header_bytes));
    parser.body_limit(s->settings.max_body_bytes);
    auto [rec, rn] = co_await bhttp::async_read(stream, buffer, parser, kTuple);
    if (rec) {
      if (auto reply = read_failure(rec)) {
        auto res = to_response(std::move(*reply), 11, false);
        lowest.expires_after(std::chrono::seconds(5));
        co_await bhttp::async_write(stream, res, kTuple);
      }
      break;
    }
    auto& req = parser.get();
    const bool keep_alive = req.keep_alive() && !s->stopping.load();
    const auto method = req.method_string();
    const auto target = req.target();
    const auto authorization = req[bhttp::field::authorization];
    const auto content_type = req[bhttp::field::content_type];
    Call call{std::string_view(method.data(), method.size()),
              std::string_view(target.data(), target.size()),
              std::string_view(req.body()),
              std::string_view(authorization.data(), authorization.size()),
              std::string_view(content_type.data(), content_type.size()),
              certificate_principal,
              conn};
    Reply reply;
    try {
      reply = co_await s->routes.answer(call);
    } catch (const std::exception& e) {
      s->log->warn("{} {} from {}: {}", call.method, call.target, conn.peer, e.what());
      reply = plain_error(500, "unknown_server_error", "the request failed on the server");
    }
    auto res = to_response(std::move(reply), req.version(), keep_alive);
    lowest.expires_after(request_time);
    auto [wec, wn] = co_await bhttp::async_write(stream, res, kTuple);
    if (wec || !keep_alive) break;
  }
}

asio::awaitable<void> serve(std::shared_ptr<ApiServer::State> s, tcp::socket socket, size_t shard,
                            std::shared_ptr<net::TlsServerContext> tls) {
  net::ConnectionContext conn;
  {
    boost::system::error_code ec;
    auto ep = socket.remote_endpoint(ec);
    conn.peer = ec ? "?" : ep.address().to_string() + ":" + std::to_string(ep.port());
  }
  conn.listener = tls ? "HTTPS" : "HTTP";
  conn.id = next_connection_id.fetch_add(1);
  conn.shard = shard;
  conn.security = tls ? SecurityProtocol::ssl : SecurityProtocol::plaintext;
  beast::tcp_stream stream(std::move(socket));
  {
    std::lock_guard lock(s->mu);
    s->open.insert(&stream.socket());
  }
  if (tls) {
    auto context = net::handshake_context(*tls);
    asio::ssl::stream<beast::tcp_stream&> secure(stream, *context);
    stream.expires_after(tls->settings().handshake_timeout);
    auto [hec] = co_await secure.async_handshake(asio::ssl::stream_base::server, kTuple);
    std::string certificate_principal;
    bool refused = false;
    if (!hec) {
      if (auto subject = net::certificate_subject(secure.native_handle())) {
        const auto& map = tls->settings().principal_of;
        auto principal = map ? map(*subject) : std::optional<std::string>("User:" + *subject);
        if (principal) {
          certificate_principal = std::move(*principal);
        } else {
          s->log->info("https connection from {}: no ssl.principal.mapping.rules rule matches the certificate subject "
                       "'{}', closing", conn.peer, *subject);
          refused = true;
        }
      }
    } else {
      s->log->debug("https connection from {}: TLS handshake failed: {}", conn.peer, hec.message());
    }
    if (!hec && !refused) co_await serve_requests(s, secure, stream, conn, certificate_principal);
  } else {
    co_await serve_requests(s, stream, stream, conn, std::string());
  }
  {
    std::lock_guard lock(s->mu);
    s->open.erase(&stream.socket());
  }
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  stream.socket().close(ignored);
  s->connections.fetch_sub(1);
}

asio::awaitable<void> accept_loop(std::shared_ptr<ApiServer::State> s, size_t index) {
  auto& acceptor = *s->acceptors[index];
  asio::steady_timer backoff(co_await asio::this_coro::executor);
  for (;;) {
    const size_t shard = s->next_shard.fetch_add(1) % s->reactors.size();
    auto [ec, socket] = co_await acceptor.async_accept(s->reactors.executor(shard), kTuple);
    if (s->stopping.load() || ec == asio::error::operation_aborted) break;
    if (ec) {
      s->log->warn("http listener: accept: {}", ec.message());
      backoff.expires_after(std::chrono::milliseconds(100));
      co_await backoff.async_wait(kTuple);
      continue;
    }
    if (s->connections.load() >= s->settings.max_connections) {
      boost::system::error_code ignored;
      socket.close(ignored);
      continue;
    }
    s->connections.fetch_add(1);
    socket.set_option(tcp::no_delay(true));
    auto ex = socket.get_executor();
    asio::co_spawn(ex, serve(s, std::move(socket), shard, s->listeners[index].tls), asio::detached);
  }
}

}  // namespace

ApiServer::ApiServer(net::ReactorPool& reactors, Routes& routes, std::vector<HttpListener> listeners,
                     ServerSettings settings)
    : state_(std::make_shared<State>(reactors, routes, std::move(listeners), settings)) {}

ApiServer::~ApiServer() { stop(); }

void ApiServer::start() {
  auto& s = *state_;
  for (size_t i = 0; i < s.listeners.size(); ++i) {
    const auto& l = s.listeners[i];
    auto acceptor = std::make_unique<tcp::acceptor>(s.reactors.executor(0));
    boost::system::error_code ec;
    if (l.bound) {
      const int fd = l.bound->release();
      if (fd < 0) throw std::logic_error("http.listeners: the bound address was already taken");
      acceptor->assign(l.bound->family() == AF_INET6 ? tcp::v6() : tcp::v4(), fd, ec);
      if (ec) ::close(fd);
    } else {
      const auto ip = l.host.empty() ? asio::ip::address(asio::ip::address_v4::any()) : asio::ip::make_address(l.host);
      tcp::endpoint ep(ip, l.port);
      acceptor->open(ep.protocol(), ec);
      if (!ec) acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
      if (!ec) acceptor->bind(ep, ec);
    }
    if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
    if (ec) net::throw_cannot_listen(ec.value(), l.host, l.port, "http.listeners");
    s.acceptors.push_back(std::move(acceptor));
  }
  for (size_t i = 0; i < s.acceptors.size(); ++i)
    asio::co_spawn(s.reactors.executor(0), accept_loop(state_, i), asio::detached);
}

void ApiServer::stop() {
  auto& s = *state_;
  if (s.stopping.exchange(true)) return;
  // Acceptors and sockets are closed on the threads that run them.
  for (size_t i = 0; i < s.acceptors.size(); ++i) {
    asio::post(s.reactors.executor(0), [st = state_, i] {
      boost::system::error_code ignored;
      st->acceptors[i]->close(ignored);
    });
  }
  for (size_t shard = 0; shard < s.reactors.size(); ++shard) {
    asio::post(s.reactors.executor(shard), [st = state_, shard] {
      std::lock_guard lock(st->mu);
      for (tcp::socket* sock : st->open) {
        if (sock->get_executor() != st->reactors.executor(shard)) continue;
        boost::system::error_code ignored;
        sock->cancel(ignored);
      }
    });
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (s.connections.load() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

uint16_t ApiServer::port(size_t listener_index) const {
  if (listener_index >= state_->acceptors.size()) return 0;
  boost::system::error_code ec;
  auto ep = state_->acceptors[listener_index]->local_endpoint(ec);
  return ec ? 0 : ep.port();
}

size_t ApiServer::connection_count() const { return static_cast<size_t>(state_->connections.load()); }

}  // namespace brokerd::http
