#include "brokerd/quorum/peer_client.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <chrono>
#include <deque>
#include <tuple>

#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/protocol/framing.h"

namespace brokerd::quorum {

namespace asio = boost::asio;
using asio::ip::tcp;
using TlsStream = asio::ssl::stream<tcp::socket&>;

namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

// The client context of a TLS controller listener: the authorities to trust, and this node's
// certificate for a listener that asks for one. Built once per peer.
std::shared_ptr<asio::ssl::context> client_context(const net::TlsClientSettings& tls) {
  auto ctx = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  if (tls.ca_file.empty()) ctx->set_default_verify_paths();
  else ctx->load_verify_file(tls.ca_file);
  ctx->set_verify_mode(asio::ssl::verify_peer);
  if (!tls.cert_file.empty()) {
    if (!tls.key_password.empty())
      ctx->set_password_callback([p = tls.key_password](std::size_t, asio::ssl::context::password_purpose) { return p; });
    ctx->use_certificate_chain_file(tls.cert_file);
    ctx->use_private_key_file(tls.key_file.empty() ? tls.cert_file : tls.key_file, asio::ssl::context::pem);
  }
  return ctx;
}

}  // namespace

struct PeerClient::State : std::enable_shared_from_this<PeerClient::State> {
  struct Pending {
    int32_t correlation = 0;
    int16_t api_key = 0;
    int16_t version = 0;
    Bytes frame;
    Done done;
    int64_t sent_ms = 0;
  };

  State(asio::any_io_executor ex, Voter p, std::string id, int64_t timeout, security::ClientCredentials c)
      : executor(ex),
        socket(ex),
        peer(std::move(p)),
        client_id(std::move(id)),
        request_timeout_ms(timeout),
        credentials(std::move(c)) {
    if (credentials.tls) tls_context = client_context(*credentials.tls);  // throws on unreadable files
  }

  asio::any_io_executor executor;
  tcp::socket socket;
  std::shared_ptr<asio::ssl::context> tls_context;  // set when the peer's listener is TLS
  // The TLS stream of the current connection; each coroutine holds the one it started with.
  std::shared_ptr<TlsStream> tls;
  Voter peer;
  std::string client_id;
  int64_t request_timeout_ms;
  security::ClientCredentials credentials;
  std::string last_refusal;  // logged once per change of text
  enum class Conn { idle, connecting, connected } conn = Conn::idle;
  bool writing = false;
  bool closed = false;  // the owner is gone
  uint64_t generation = 0;  // bumped at every disconnect: stale coroutines stop
  int32_t next_correlation = 1;
  std::deque<Pending> outbox;
  std::deque<Pending> inflight;
  int64_t connect_started_ms = 0;

  void fail_all(bool refused) {
    std::deque<Pending> failed;
    failed.swap(inflight);
    for (auto& p : outbox) failed.push_back(std::move(p));
    outbox.clear();
    for (auto& p : failed) {
      asio::post(executor, [done = std::move(p.done), refused] { done(std::nullopt, refused); });
    }
  }

  void disconnect(const char* why, bool refused = false) {
    if (conn != Conn::idle) module_logger("quorum")->debug("connection to node {} closed: {}", peer.id, why);
    boost::system::error_code ec;
    socket.close(ec);
    tls.reset();
    conn = Conn::idle;
    writing = false;
    ++generation;
    fail_all(refused);
  }

  void kick() {
    if (closed) return;
    if (conn == Conn::idle) {
      conn = Conn::connecting;
      connect_started_ms = steady_clock_ms();
      asio::co_spawn(executor, connect(shared_from_this(), generation), asio::detached);
    } else if (conn == Conn::connected && !writing && !outbox.empty()) {
      writing = true;
      asio::co_spawn(executor, write_loop(shared_from_this(), generation), asio::detached);
    }
  }

  static asio::awaitable<void> connect(std::shared_ptr<State> s, uint64_t gen) {
    tcp::resolver resolver(s->executor);
    auto [rec, endpoints] = co_await resolver.async_resolve(s->peer.host, std::to_string(s->peer.port),
                                                            asio::as_tuple(asio::use_awaitable));
    if (gen != s->generation || s->closed) co_return;
    if (rec) {
      s->disconnect("cannot resolve");
      co_return;
    }
    auto [ec, ep] = co_await asio::async_connect(s->socket, endpoints, asio::as_tuple(asio::use_awaitable));
    if (gen != s->generation || s->closed) co_return;
    if (ec) {
      s->disconnect("connect failed", ec == asio::error::connection_refused);
      co_return;
    }
    s->socket.set_option(tcp::no_delay(true));
    if (s->tls_context && !co_await handshake(s, gen)) co_return;
    if (s->credentials.enabled() && !co_await authenticate(s, gen)) co_return;
    s->conn = Conn::connected;
    asio::co_spawn(s->executor, read_loop(s, gen), asio::detached);
    s->kick();
  }

  static asio::awaitable<bool> handshake(std::shared_ptr<State> s, uint64_t gen) {
    auto stream = std::make_shared<TlsStream>(s->socket, *s->tls_context);
    const std::string& host = s->peer.host;
    boost::system::error_code not_an_address;
    asio::ip::make_address(host, not_an_address);
    if (not_an_address) SSL_set_tlsext_host_name(stream->native_handle(), host.c_str());
    if (s->credentials.tls->verify_hostname) stream->set_verify_callback(asio::ssl::host_name_verification(host));
    auto [ec] = co_await stream->async_handshake(asio::ssl::stream_base::client, kTuple);
    if (gen != s->generation || s->closed) co_return false;
    if (ec) {
      const std::string why = "TLS handshake with " + host + ":" + std::to_string(s->peer.port) + ": " + ec.message();
      if (s->last_refusal != why) {
        module_logger("security")->warn("node {}: {}", s->peer.id, why);
        s->last_refusal = why;
      }
      s->disconnect("TLS handshake failed");
      co_return false;
    }
    s->tls = std::move(stream);
    s->last_refusal.clear();
    co_return true;
  }

  // One frame out, or a buffer filled, on the connection's TLS stream when it has one.
  static asio::awaitable<boost::system::error_code> write(std::shared_ptr<TlsStream> tls, tcp::socket& socket,
                                                          asio::const_buffer frame) {
    boost::system::error_code ec;
    if (tls) std::tie(ec, std::ignore) = co_await asio::async_write(*tls, frame, kTuple);
    else std::tie(ec, std::ignore) = co_await asio::async_write(socket, frame, kTuple);
    co_return ec;
  }
  static asio::awaitable<boost::system::error_code> read(std::shared_ptr<TlsStream> tls, tcp::socket& socket,
                                                         asio::mutable_buffer into) {
    boost::system::error_code ec;
    if (tls) std::tie(ec, std::ignore) = co_await asio::async_read(*tls, into, kTuple);
    else std::tie(ec, std::ignore) = co_await asio::async_read(socket, into, kTuple);
    co_return ec;
  }

  // The SASL exchange on the fresh connection, one request at a time; false (and
  // disconnected, unless a newer connection took over) when it failed.
  static asio::awaitable<bool> authenticate(std::shared_ptr<State> s, uint64_t gen) {
    security::SaslClientExchange exchange(s->credentials);
    std::optional<security::SaslClientExchange::Request> req = exchange.first();
    int32_t correlation = 0;
    try {
      while (req) {
        protocol::Writer w;
        protocol::encode_request_header(w, req->api_key, req->version, ++correlation, s->client_id);
        w.raw(req->body);
        const Bytes frame = protocol::with_size_prefix(std::move(w).finish_bytes());
        const auto ec = co_await write(s->tls, s->socket, asio::buffer(frame));
        if (gen != s->generation || s->closed) co_return false;
        if (ec) {
          s->disconnect("connection failed during authentication");
          co_return false;
        }
        std::byte size_buf[4];
        const auto ec2 = co_await read(s->tls, s->socket, asio::buffer(size_buf));
        if (gen != s->generation || s->closed) co_return false;
        const uint32_t size = protocol::size_prefix(size_buf);
        if (ec2 || size < 4 || size > (1u << 20)) {
          s->disconnect("connection failed during authentication");
          co_return false;
        }
        Bytes body(size);
        const auto ec3 = co_await read(s->tls, s->socket, asio::buffer(body));
        if (gen != s->generation || s->closed) co_return false;
        if (ec3) {
          s->disconnect("connection failed during authentication");
          co_return false;
        }
        protocol::Reader r(body);
        if (protocol::decode_response_header(r, req->api_key, req->version) != correlation)
          throw security::AuthenticationError("answer out of order");
        req = exchange.next(Bytes(body.end() - static_cast<ptrdiff_t>(r.remaining()), body.end()));
      }
    } catch (const std::exception& e) {
      if (s->last_refusal != e.what()) {
        module_logger("security")->warn("authentication to node {} at {}:{} failed: {}", s->peer.id, s->peer.host,
                                        s->peer.port, e.what());
        s->last_refusal = e.what();
      }
      s->disconnect("authentication failed");
      co_return false;
    }
    s->last_refusal.clear();
    co_return true;
  }

  static asio::awaitable<void> write_loop(std::shared_ptr<State> s, uint64_t gen) {
    const auto tls = s->tls;
    while (gen == s->generation && !s->closed && !s->outbox.empty()) {
      Pending p = std::move(s->outbox.front());
      s->outbox.pop_front();
      p.sent_ms = steady_clock_ms();
      Bytes frame = std::move(p.frame);
      s->inflight.push_back(std::move(p));
      const auto ec = co_await write(tls, s->socket, asio::buffer(frame));
      if (gen != s->generation || s->closed) co_return;
      if (ec) {
        s->disconnect("write failed");
        co_return;
      }
    }
    if (gen == s->generation) s->writing = false;
  }

  static asio::awaitable<void> read_loop(std::shared_ptr<State> s, uint64_t gen) {
    const auto tls = s->tls;
    std::byte size_buf[4];
    while (true) {
      const auto ec = co_await read(tls, s->socket, asio::buffer(size_buf));
      if (gen != s->generation || s->closed) co_return;
      if (ec) {
        s->disconnect("read failed");
        co_return;
      }
      const uint32_t size = protocol::size_prefix(size_buf);
      if (size < 4 || size > (64u << 20) || s->inflight.empty()) {
        s->disconnect("unexpected response");
        co_return;
      }
      Bytes body(size);
      const auto ec2 = co_await read(tls, s->socket, asio::buffer(body));
      if (gen != s->generation || s->closed) co_return;
      if (ec2) {
        s->disconnect("read failed");
        co_return;
      }
      Pending p = std::move(s->inflight.front());
      s->inflight.pop_front();
      try {
        protocol::Reader r(body);
        if (protocol::decode_response_header(r, p.api_key, p.version) != p.correlation) {
          s->disconnect("response out of order");
          co_return;
        }
        Bytes rest(body.begin() + static_cast<ptrdiff_t>(body.size() - r.remaining()), body.end());
        p.done(std::move(rest), false);
      } catch (const protocol::DecodeError&) {
        s->disconnect("malformed response header");
        co_return;
      }
    }
  }
};

PeerClient::PeerClient(asio::any_io_executor ex, Voter peer, std::string client_id, int64_t request_timeout_ms,
                       security::ClientCredentials credentials)
    : state_(std::make_shared<State>(ex, peer, std::move(client_id), request_timeout_ms, std::move(credentials))),
      peer_(std::move(peer)) {}

PeerClient::~PeerClient() { close(); }

void PeerClient::send(int16_t api_key, int16_t version, Bytes body, Done done) {
  auto& s = *state_;
  if (s.closed) {
    asio::post(s.executor, [done = std::move(done)] { done(std::nullopt, false); });
    return;
  }
  State::Pending p;
  p.correlation = s.next_correlation++;
  if (s.next_correlation == INT32_MAX) s.next_correlation = 1;
  p.api_key = api_key;
  p.version = version;
  protocol::Writer w;
  protocol::encode_request_header(w, api_key, version, p.correlation, s.client_id);
  w.raw(body);
  p.frame = protocol::with_size_prefix(std::move(w).finish_bytes());
  p.done = std::move(done);
  s.outbox.push_back(std::move(p));
  s.kick();
}

void PeerClient::expire(int64_t now_ms) {
  auto& s = *state_;
  const int64_t limit = s.request_timeout_ms;
  if (s.conn == State::Conn::connecting && now_ms - s.connect_started_ms > limit) {
    s.disconnect("connect timed out");
  } else if (!s.inflight.empty() && now_ms - s.inflight.front().sent_ms > limit) {
    s.disconnect("request timed out");
  }
}

size_t PeerClient::pending() const { return state_->outbox.size() + state_->inflight.size(); }

void PeerClient::close() {
  if (!state_ || state_->closed) return;
  state_->disconnect("closed");
  state_->closed = true;
}

}  // namespace brokerd::quorum
