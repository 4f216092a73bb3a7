#include "brokerd/net/server.h"

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <system_error>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <stdexcept>

#include "brokerd/net/reactor_pool.h"
#include "connection.h"
#include "server_state.h"
#include "tls_context.h"

namespace brokerd::net {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

tcp::endpoint resolve(asio::any_io_executor ex, const Listener& l) {
  if (l.host.empty()) return tcp::endpoint(tcp::v4(), l.port);
  boost::system::error_code ec;
  auto address = asio::ip::make_address(l.host, ec);
  if (!ec) return tcp::endpoint(address, l.port);
  tcp::resolver resolver(ex);
  auto results = resolver.resolve(l.host, std::to_string(l.port));  // throws if unknown
  return *results.begin();
}

// The client's address as max.connections.per.ip.overrides names it (IPv4 for a mapped one).
std::string client_address(const tcp::socket& socket) {
  boost::system::error_code ec;
  const auto endpoint = socket.remote_endpoint(ec);
  if (ec) return "?";
  auto address = endpoint.address();
  if (address.is_v6() && address.to_v6().is_v4_mapped())
    return asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6()).to_string();
  return address.to_string();
}

// max.connection.creation.rate of one listener: at most `rate` connections accepted in each
// second (a fixed window; the listener's accept loop is its only user).
struct CreationRate {
  std::chrono::steady_clock::time_point window_start = std::chrono::steady_clock::now();
  int64_t accepted = 0;

  // Says why a new connection may not be accepted now, if it may not.
  std::optional<std::string> refusal(int64_t rate) {
    if (rate < 0) return std::nullopt;
    const auto now = std::chrono::steady_clock::now();
    if (now - window_start >= std::chrono::seconds(1)) {
      window_start = now;
      accepted = 0;
    }
    if (accepted >= rate) return "max.connection.creation.rate " + std::to_string(rate);
    return std::nullopt;
  }
};

// Logs refused connections at most once per 10 s per listener, so a flood cannot fill the log.
struct Refusals {
  std::chrono::steady_clock::time_point last_log{};
  uint64_t unlogged = 0;

  void note(Server::State& state, const std::string& listener, const std::string& address,
            const std::string& bound) {
    state.refused_connections.fetch_add(1);
    ++unlogged;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_log < std::chrono::seconds(10)) return;
    state.log->warn("listener {}: closed a new connection from {} at once: {} reached ({} refused since the last "
                    "such line)", listener, address, bound, unlogged);
    last_log = now;
    unlogged = 0;
  }
};

asio::awaitable<void> accept_loop(std::shared_ptr<Server::State> state, size_t index) {
  auto& acceptor = *state->acceptors[index];
  const Listener& listener = state->listeners[index];
  const std::string& name = listener.name;
  asio::steady_timer backoff(co_await asio::this_coro::executor);
  CreationRate rate;
  Refusals refusals;
  for (;;) {
    const size_t shard = state->next_shard.fetch_add(1) % state->reactors.size();
    auto [ec, socket] = co_await acceptor.async_accept(state->reactors.executor(shard),
                                                       asio::as_tuple(asio::use_awaitable));
    if (state->stopping.load() || ec == asio::error::operation_aborted) break;
    if (ec) {
      // Typically out of descriptors: pause rather than spin.
      state->log->warn("listener {}: accept: {}", name, ec.message());
      backoff.expires_after(std::chrono::milliseconds(100));
      co_await backoff.async_wait(asio::as_tuple(asio::use_awaitable));
      continue;
    }
    std::string address = client_address(socket);
    // Only connections accepted count towards the rate, not those another bound refused.
    auto refusal = rate.refusal(state->config.max_connection_creation_rate);
    if (!refusal) refusal = state->admit(address);
    if (refusal) {
      boost::system::error_code ignored;
      socket.close(ignored);
      refusals.note(*state, name, address, *refusal);
      continue;
    }
    ++rate.accepted;
    auto ex = socket.get_executor();
    // The connection is built on its own shard, the only thread that will touch it.
    auto tls = listener.tls ? static_cast<TlsContextImpl&>(*listener.tls).current() : nullptr;
    asio::post(ex, [state, socket = std::move(socket), &listener, shard, tls = std::move(tls),
                    address = std::move(address)]() mutable {
      auto conn = std::make_shared<Connection>(state, std::move(socket), listener, shard, std::move(tls),
                                               std::move(address));
      conn->start();
    });
  }
}

// Runs f on every shard (on its thread) and waits for all of them, at most `timeout`.
template <typename F>
void on_every_shard(const std::shared_ptr<Server::State>& s, F f, std::chrono::milliseconds timeout) {
  auto& state = *s;
  auto pending = std::make_shared<std::atomic<size_t>>(state.reactors.size());
  for (size_t shard = 0; shard < state.reactors.size(); ++shard) {
    asio::post(state.reactors.executor(shard), [f, shard, pending, s] {
      f(shard);
      std::lock_guard lock(s->mu);
      pending->fetch_sub(1);
      s->cv.notify_all();
    });
  }
  std::unique_lock lock(state.mu);
  state.cv.wait_for(lock, timeout, [&] { return pending->load() == 0; });
}

}  // namespace

Server::Server(ReactorPool& reactors, BlockingPool& blocking, Dispatcher& dispatcher,
               std::vector<Listener> listeners, ServerConfig config)
    : state_(std::make_shared<State>(reactors, blocking, dispatcher, std::move(listeners), config)) {
  state_->shards.resize(reactors.size());
}

Server::~Server() { stop(); }

void Server::start() {
  if (started_) throw std::logic_error("Server already started");
  started_ = true;
  auto ex = state_->reactors.executor(0);
  for (const auto& l : state_->listeners) {
    auto acceptor = std::make_unique<tcp::acceptor>(ex);
    boost::system::error_code ec;
    if (l.bound) {
      const int fd = l.bound->release();
      if (fd < 0) throw std::logic_error("listener " + l.name + ": its bound address was already taken");
      acceptor->assign(l.bound->family() == AF_INET6 ? tcp::v6() : tcp::v4(), fd, ec);
      if (ec) ::close(fd);
    } else {
      auto endpoint = resolve(ex, l);
      acceptor->open(endpoint.protocol(), ec);
      if (!ec) acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
      if (!ec) acceptor->bind(endpoint, ec);
    }
    if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
    // One clear line for the operator; std::system_error so callers need not know Asio.
    if (ec) throw_cannot_listen(ec.value(), l.host, l.port, l.name);
    const auto local = acceptor->local_endpoint();
    state_->ports.push_back(local.port());
    state_->log->info("listener {} on {}:{}", l.name, local.address().to_string(), state_->ports.back());
    state_->acceptors.push_back(std::move(acceptor));
  }
  for (size_t i = 0; i < state_->acceptors.size(); ++i) {
    {
      std::lock_guard lock(state_->mu);
      ++state_->accept_loops;
    }
    asio::co_spawn(ex, accept_loop(state_, i), [state = state_](std::exception_ptr e) {
      if (e) state->log->error("accept loop ended with an exception");
      std::lock_guard lock(state->mu);
      --state->accept_loops;
      state->cv.notify_all();
    });
  }
}

void Server::stop() {
  if (!started_ || stopped_) return;
  stopped_ = true;
  auto& state = *state_;
  state.stopping.store(true);
  using std::chrono::milliseconds;

  // 1. No new connections.
  asio::post(state.reactors.executor(0), [s = state_] {
    for (auto& a : s->acceptors) {
      boost::system::error_code ec;
      a->close(ec);
    }
  });

  if (current_shard() >= 0) {
    // Blocking here would stall this shard's own connections: only initiate.
    state.log->warn("Server::stop() called on a reactor thread; not waiting for connections");
    for (size_t shard = 0; shard < state.reactors.size(); ++shard) {
      asio::post(state.reactors.executor(shard), [s = state_, shard] {
        for (auto& [id, c] : s->shards[shard]) c->drain();
      });
    }
    return;
  }

  {
    std::unique_lock lock(state.mu);
    state.cv.wait_for(lock, milliseconds(2000), [&] { return state.accept_loops == 0; });
  }

  // 2. Let in-flight requests finish and their responses go out.
  on_every_shard(
      state_, [s = state_](size_t shard) {
        // Copy: drain() may finish a connection and erase it from the map.
        auto conns = s->shards[shard];
        for (auto& [id, c] : conns) c->drain();
      },
      milliseconds(2000));
  {
    std::unique_lock lock(state.mu);
    state.cv.wait_for(lock, milliseconds(state.config.shutdown_drain_ms),
                      [&] { return state.live_connections == 0; });
  }

  // 3. Cut what is left.
  on_every_shard(
      state_, [s = state_](size_t shard) {
        auto conns = s->shards[shard];
        for (auto& [id, c] : conns) c->close();
      },
      milliseconds(2000));
  std::unique_lock lock(state.mu);
  if (!state.cv.wait_for(lock, milliseconds(2000), [&] { return state.live_connections == 0; })) {
    state.log->warn("{} connections still open after stop", state.live_connections);
  }
}

uint16_t Server::port(std::string_view listener_name) const {
  for (size_t i = 0; i < state_->listeners.size() && i < state_->ports.size(); ++i) {
    if (state_->listeners[i].name == listener_name) return state_->ports[i];
  }
  throw std::out_of_range("no bound listener named " + std::string(listener_name));
}

uint16_t Server::port(size_t listener_index) const { return state_->ports.at(listener_index); }

size_t Server::connection_count() const {
  std::lock_guard lock(state_->mu);
  return state_->live_connections;
}

uint64_t Server::refused_connection_count() const { return state_->refused_connections.load(); }

int64_t Server::queued_request_bytes() const { return state_->queued_bytes.load(); }

}  // namespace brokerd::net
