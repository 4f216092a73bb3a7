#include "brokerd/quorum/peer_client.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <chrono>
#include <deque>

#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/protocol/framing.h"

namespace brokerd::quorum {

namespace asio = boost::asio;
using asio::ip::tcp;

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
        credentials(std::move(c)) {}

  asio::any_io_executor executor;
  tcp::socket socket;
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

  void fail_all() {
    std::deque<Pending> failed;
    failed.swap(inflight);
    for (auto& p : outbox) failed.push_back(std::move(p));
    outbox.clear();
    for (auto& p : failed) {
      asio::post(executor, [done = std::move(p.done)] { done(std::nullopt); });
    }
  }

  void disconnect(const char* why) {
    if (conn != Conn::idle) module_logger("quorum")->debug("connection to node {} closed: {}", peer.id, why);
    boost::system::error_code ec;
    socket.close(ec);
    conn = Conn::idle;
    writing = false;
    ++generation;
    fail_all();
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
      s->disconnect("connect failed");
      co_return;
    }
    s->socket.set_option(tcp::no_delay(true));
    if (s->credentials.enabled() && !co_await authenticate(s, gen)) co_return;
    s->conn = Conn::connected;
    asio::co_spawn(s->executor, read_loop(s, gen), asio::detached);
    s->kick();
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
        auto [ec, n] = co_await asio::async_write(s->socket, asio::buffer(frame), asio::as_tuple(asio::use_awaitable));
        if (gen != s->generation || s->closed) co_return false;
        if (ec) {
          s->disconnect("connection failed during authentication");
          co_return false;
        }
        std::byte size_buf[4];
        auto [ec2, n2] = co_await asio::async_read(s->socket, asio::buffer(size_buf), asio::as_tuple(asio::use_awaitable));
        if (gen != s->generation || s->closed) co_return false;
        const uint32_t size = protocol::size_prefix(size_buf);
        if (ec2 || size < 4 || size > (1u << 20)) {
          s->disconnect("connection failed during authentication");
          co_return false;
        }
        Bytes body(size);
        auto [ec3, n3] = co_await asio::async_read(s->socket, asio::buffer(body), asio::as_tuple(asio::use_awaitable));
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
    while (gen == s->generation && !s->closed && !s->outbox.empty()) {
      Pending p = std::move(s->outbox.front());
      s->outbox.pop_front();
      p.sent_ms = steady_clock_ms();
      Bytes frame = std::move(p.frame);
      s->inflight.push_back(std::move(p));
      auto [ec, n] = co_await asio::async_write(s->socket, asio::buffer(frame), asio::as_tuple(asio::use_awaitable));
      if (gen != s->generation || s->closed) co_return;
      if (ec) {
        s->disconnect("write failed");
        co_return;
      }
    }
    if (gen == s->generation) s->writing = false;
  }

  static asio::awaitable<void> read_loop(std::shared_ptr<State> s, uint64_t gen) {
    std::byte size_buf[4];
    while (true) {
      auto [ec, n] = co_await asio::async_read(s->socket, asio::buffer(size_buf), asio::as_tuple(asio::use_awaitable));
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
      auto [ec2, n2] = co_await asio::async_read(s->socket, asio::buffer(body), asio::as_tuple(asio::use_awaitable));
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
        p.done(std::move(rest));
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
    asio::post(s.executor, [done = std::move(done)] { done(std::nullopt); });
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

void PeerClient::close() {
  if (!state_ || state_->closed) return;
  state_->disconnect("closed");
  state_->closed = true;
}

}  // namespace brokerd::quorum
