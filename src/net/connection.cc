#include "connection.h"

#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ssl/error.hpp>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "brokerd/net/blocking_pool.h"
#include "brokerd/net/resident.h"
#include "request_header.h"
#include "tls_context.h"

namespace brokerd::net {

namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);
constexpr size_t kStageSize = 64 * 1024;
constexpr size_t kMaxSpareBuffers = 8;
constexpr size_t kMaxCachedFrame = 8 * 1024 * 1024;
constexpr size_t kMaxGatherBuffers = 256;
constexpr size_t kMaxLowWater = 1024 * 1024;
// A file range sent over TLS is read and encrypted this much at a time.
constexpr size_t kTlsFileChunk = 256 * 1024;
// How often a reader blocked only by the node-wide budget looks again: releases by other
// connections happen on other shards, which do not wake it.
constexpr auto kNodeBudgetPoll = 5ms;

std::string endpoint_string(const tcp::socket& s) {
  boost::system::error_code ec;
  auto ep = s.remote_endpoint(ec);
  if (ec) return "?";
  return ep.address().to_string() + ":" + std::to_string(ep.port());
}

}  // namespace

Connection::Connection(std::shared_ptr<Server::State> state, tcp::socket socket,
                       const Listener& listener, size_t shard, std::shared_ptr<asio::ssl::context> tls,
                       std::string address)
    : state_(std::move(state)),
      listener_(listener),
      socket_(std::move(socket)),
      tls_context_(std::move(tls)),
      address_(std::move(address)),
      stage_(std::make_unique_for_overwrite<std::byte[]>(kStageSize)),
      reader_wake_(socket_.get_executor()),
      writer_wake_(socket_.get_executor()),
      idle_timer_(socket_.get_executor()),
      handshake_timer_(socket_.get_executor()) {
  if (tls_context_) tls_ = std::make_unique<asio::ssl::stream<tcp::socket&>>(socket_, *tls_context_);
  context_.peer = endpoint_string(socket_);
  context_.listener = listener.name;
  context_.security = listener.security;
  context_.authenticated = !uses_sasl(listener.security);
  context_.id = state_->next_connection_id.fetch_add(1);
  context_.shard = shard;
  touch();
}

void Connection::start() {
  state_->shards[context_.shard].emplace(context_.id, shared_from_this());
  boost::system::error_code ec;
  socket_.set_option(tcp::no_delay(true), ec);
  // sendfile() is called directly on the descriptor and must not block the reactor.
  socket_.native_non_blocking(true, ec);
  if (ec) {
    state_->log->warn("connection {} from {}: cannot set non-blocking: {}", context_.id,
                      context_.peer, ec.message());
  }
  state_->log->debug("connection {} from {} on {} opened on shard {}", context_.id,
                     context_.peer, context_.listener, context_.shard);

  auto self = shared_from_this();
  auto on_exit = [self](std::exception_ptr e) {
    if (e) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        self->state_->log->error("connection {}: {}", self->context_.id, ex.what());
      } catch (...) {
        self->state_->log->error("connection {}: non-standard exception", self->context_.id);
      }
      self->close();
    }
    self->coroutine_done();
  };
  running_ = state_->config.connections_max_idle_ms > 0 ? 3 : 2;
  asio::co_spawn(socket_.get_executor(), reader(), on_exit);
  asio::co_spawn(socket_.get_executor(), writer(), on_exit);
  if (running_ == 3) asio::co_spawn(socket_.get_executor(), watchdog(), on_exit);
  if (state_->stopping.load()) drain();
}

void Connection::drain() {
  if (draining_ || closed_) return;
  draining_ = true;
  read_cancel_.emit(asio::cancellation_type::all);
  notify(reader_wake_);
  notify(writer_wake_);
}

void Connection::close() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ec;
  socket_.close(ec);
  notify(reader_wake_);
  notify(writer_wake_);
  idle_timer_.cancel();
  handshake_timer_.cancel();
}

void Connection::coroutine_done() {
  if (--running_ > 0) return;
  state_->log->debug("connection {} from {} closed", context_.id, context_.peer);
  state_->shards[context_.shard].erase(context_.id);
  state_->remove_live(address_);
}

asio::awaitable<void> Connection::wait(asio::steady_timer& event,
                                       std::chrono::steady_clock::duration timeout) {
  event.expires_after(timeout);
  co_await event.async_wait(kAwait);
}

// ---- reader ------------------------------------------------------------------------------

asio::awaitable<bool> Connection::handshake() {
  const TlsSettings& settings = listener_.tls->settings();
  handshake_timer_.expires_after(settings.handshake_timeout);
  handshake_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (ec) return;
    self->state_->log->info("connection {} from {} on {}: no TLS handshake within {} ms, closing", self->context_.id,
                            self->context_.peer, self->context_.listener, self->listener_.tls->settings().handshake_timeout.count());
    self->close();
  });
  auto [ec] = co_await tls_->async_handshake(asio::ssl::stream_base::server,
                                             asio::bind_cancellation_slot(read_cancel_.slot(), kAwait));
  handshake_timer_.cancel();
  if (ec || closed_) {
    if (ec && ec != asio::error::operation_aborted && !closed_) {
      state_->log->info("connection {} from {} on {}: TLS handshake failed: {}", context_.id, context_.peer,
                        context_.listener, ec.message());
    }
    close();
    co_return false;
  }
  touch();
  if (context_.security != SecurityProtocol::ssl) co_return true;  // SASL_SSL: SASL names the principal
  if (auto subject = peer_subject(tls_->native_handle())) {
    auto principal = settings.principal_of ? settings.principal_of(*subject) : std::optional<std::string>("User:" + *subject);
    if (!principal) {
      state_->log->info("connection {} from {} on {}: no ssl.principal.mapping.rules rule matches the certificate "
                        "subject '{}', closing", context_.id, context_.peer, context_.listener, *subject);
      close();
      co_return false;
    }
    context_.principal = std::move(*principal);
  }
  co_return true;
}

asio::awaitable<bool> Connection::fill(size_t want) {
  while (stage_end_ - stage_begin_ < want) {
    if (closed_ || draining_) co_return false;
    if (stage_begin_ > 0) {
      std::memmove(stage_.get(), stage_.get() + stage_begin_, stage_end_ - stage_begin_);
      stage_end_ -= stage_begin_;
      stage_begin_ = 0;
    }
    const auto space = asio::buffer(stage_.get() + stage_end_, kStageSize - stage_end_);
    boost::system::error_code ec;
    size_t n = 0;
    if (tls_) {
      std::tie(ec, n) = co_await tls_->async_read_some(space, asio::bind_cancellation_slot(read_cancel_.slot(), kAwait));
    } else {
      std::tie(ec, n) = co_await socket_.async_read_some(space, asio::bind_cancellation_slot(read_cancel_.slot(), kAwait));
    }
    if (ec == asio::ssl::error::stream_truncated) ec = asio::error::eof;  // closed without close_notify
    if (ec) {
      if (ec == asio::error::eof) {
        if (stage_end_ > stage_begin_) {
          state_->log->debug("connection {} from {}: closed in the middle of a frame",
                             context_.id, context_.peer);
        }
      } else if (ec != asio::error::operation_aborted) {
        state_->log->debug("connection {} from {}: read: {}", context_.id, context_.peer,
                           ec.message());
        close();
      }
      co_return false;
    }
    stage_end_ += n;
    touch();
  }
  co_return true;
}

asio::awaitable<bool> Connection::wait_for_budget(int64_t frame_size, bool independent) {
  const auto& cfg = state_->config;
  for (;;) {
    if (closed_ || draining_) co_return false;
    const int64_t requests = static_cast<int64_t>(slots_.size());
    const bool connection_ok =
        requests < cfg.max_inflight_requests_per_connection &&
        (inflight_bytes_ == 0 || inflight_bytes_ + frame_size <= cfg.max_inflight_bytes_per_connection);
    // Like Kafka's memory pool: admit while the node is under its limit, even if this frame
    // takes it over, so that a large frame cannot starve.
    if (!principal_bytes_ || principal_counted_ != context_.principal) {
      principal_counted_ = context_.principal;
      principal_bytes_ = state_->principal_bytes(principal_counted_);
    }
    const bool node_ok =
        independent || (state_->queued_bytes.load(std::memory_order_relaxed) < cfg.queued_max_request_bytes &&
                        (cfg.queued_max_request_bytes_per_principal <= 0 ||
                         principal_bytes_->load(std::memory_order_relaxed) < cfg.queued_max_request_bytes_per_principal));
    if (connection_ok && node_ok) co_return true;
    reader_waiting_ = true;
    co_await wait(reader_wake_, connection_ok ? std::chrono::steady_clock::duration(kNodeBudgetPoll)
                                              : std::chrono::steady_clock::duration(24h));
    reader_waiting_ = false;
  }
}

std::shared_ptr<Connection::FrameBuffer> Connection::acquire_buffer(size_t size) {
  std::shared_ptr<FrameBuffer>* reusable = nullptr;
  for (auto& b : spare_buffers_) {
    if (b.use_count() != 1) continue;  // a request (or something it fed) still holds it
    // Pairs with the release in the other holder's decrement, so its reads happen before our writes.
    std::atomic_thread_fence(std::memory_order_acquire);
    if (b->capacity >= size) return b;
    reusable = &b;
  }
  // Some slack so that frames of slightly varying sizes reuse one buffer.
  const size_t capacity = std::max<size_t>((size + size / 8 + 4095) & ~size_t{4095}, 16 * 1024);
  auto fresh = std::make_shared<FrameBuffer>();
  fresh->data = std::make_unique_for_overwrite<std::byte[]>(capacity);
  fresh->capacity = capacity;
  if (capacity <= kMaxCachedFrame) {
    if (reusable) {
      *reusable = fresh;
    } else if (spare_buffers_.size() < kMaxSpareBuffers) {
      spare_buffers_.push_back(fresh);
    }
  }
  return fresh;
}

asio::awaitable<void> Connection::reader() {
  const auto& cfg = state_->config;
  if (tls_ && !co_await handshake()) {
    reader_done_ = true;
    notify(writer_wake_);
    co_return;
  }
  for (;;) {
    // Muted while a quota throttle lasts (close() wakes this).
    while (!closed_ && !draining_ && context_.throttled_until > std::chrono::steady_clock::now())
      co_await wait(reader_wake_, context_.throttled_until - std::chrono::steady_clock::now());
    if (closed_) break;
    if (!co_await fill(4)) break;
    const auto size = static_cast<int32_t>(read_be32(stage_.get() + stage_begin_));
    stage_begin_ += 4;
    const int64_t max_size =
        context_.authenticated ? cfg.socket_request_max_bytes : cfg.unauthenticated_request_max_bytes;
    const int32_t min_size = context_.bare_sasl_tokens ? 0 : kMinFrameSize;
    if (size < min_size || size > max_size) {
      state_->log->warn("connection {} from {}: request size {} out of range [{}, {}]{}, closing",
                        context_.id, context_.peer, size, min_size, max_size,
                        context_.authenticated ? "" : " before authentication");
      close();
      break;
    }
    // The API key (the first two bytes of a header) decides whether the node-wide budget
    // applies: a frame of at least 8 bytes has one.
    bool independent = false;
    if (size >= kMinFrameSize && !context_.bare_sasl_tokens) {
      if (!co_await fill(2)) break;
      independent = answers_alone(static_cast<int16_t>(read_be16(stage_.get() + stage_begin_)), size);
    }
    if (!co_await wait_for_budget(size, independent)) break;

    auto buffer = acquire_buffer(static_cast<size_t>(size));
    const size_t staged = std::min(stage_end_ - stage_begin_, static_cast<size_t>(size));
    std::memcpy(buffer->data.get(), stage_.get() + stage_begin_, staged);
    stage_begin_ += staged;
    if (staged < static_cast<size_t>(size)) {
      // The rest of a large frame goes straight into its buffer. Not cancelled by drain():
      // the client has sent this request, so it gets its answer.
      if (!co_await read_body(buffer->data.get() + staged, static_cast<size_t>(size) - staged)) {
        close();
        break;
      }
    }
    if (closed_) break;
    start_dispatch(std::move(buffer), static_cast<size_t>(size));
    if (closed_) break;
    // Fair turns: with the next frame already staged this loop would go on without waiting
    // for the socket, so a client that pipelines many requests would have the reactor to
    // itself. It goes to the back of the queue instead, behind every other connection's
    // ready work (a socket read already takes a turn of its own).
    if (stage_end_ > stage_begin_) co_await asio::post(socket_.get_executor(), asio::use_awaitable);
  }
  reader_done_ = true;
  notify(writer_wake_);
}

asio::awaitable<bool> Connection::read_body(std::byte* out, size_t left) {
  if (tls_) {
    auto [ec, n] = co_await asio::async_read(*tls_, asio::buffer(out, left), kAwait);
    if (ec) {
      state_->log->debug("connection {} from {}: read: {}", context_.id, context_.peer, ec.message());
      co_return false;
    }
    touch();
    co_return !closed_;
  }
  while (left > 0) {
    if (closed_) co_return false;
    const ssize_t n = ::recv(socket_.native_handle(), out, left, MSG_DONTWAIT);
    if (n > 0) {
      out += n;
      left -= static_cast<size_t>(n);
      touch();
      continue;
    }
    if (n == 0) {
      state_->log->debug("connection {} from {}: closed in the middle of a frame", context_.id, context_.peer);
      co_return false;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      state_->log->debug("connection {} from {}: read: {}", context_.id, context_.peer, std::strerror(errno));
      co_return false;
    }
    set_receive_low_water(left);
    auto [ec] = co_await socket_.async_wait(tcp::socket::wait_read, kAwait);
    if (ec) co_return false;
  }
  set_receive_low_water(1);
  co_return true;
}

void Connection::set_receive_low_water(size_t bytes) {
  const int value = static_cast<int>(std::min(bytes, kMaxLowWater));
  if (value == receive_low_water_) return;
  if (::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVLOWAT, &value, sizeof value) == 0) {
    receive_low_water_ = value;
  }
}

void Connection::start_dispatch(std::shared_ptr<FrameBuffer> buffer, size_t size) {
  std::span<const std::byte> bytes(buffer->data.get(), size);
  auto header = context_.bare_sasl_tokens ? std::optional<RequestHeaderPrefix>(RequestHeaderPrefix{36, kBareSaslToken, 0, {}, 0})
                                          : parse_request_header(bytes);
  if (!header) {
    state_->log->warn("connection {} from {}: malformed request header, closing", context_.id,
                      context_.peer);
    close();
    return;
  }
  Request req;
  req.api_key = header->api_key;
  req.api_version = header->api_version;
  req.correlation_id = header->correlation_id;
  req.client_id = std::move(header->client_id);
  req.frame = brokerd::SharedBytes{std::move(buffer), bytes};
  req.header_end = header->header_end;
  req.connection = &context_;

  Slot& slot = slots_.emplace_back();
  slot.request_bytes = static_cast<int64_t>(size);
  inflight_bytes_ += slot.request_bytes;
  state_->queued_bytes.fetch_add(slot.request_bytes, std::memory_order_relaxed);
  if (principal_bytes_) {
    slot.principal_bytes = principal_bytes_;
    slot.principal_bytes->fetch_add(slot.request_bytes, std::memory_order_relaxed);
  }
  const uint64_t seq = next_seq_++;
  const int16_t api_key = req.api_key;
  const int32_t correlation_id = req.correlation_id;

  // co_spawn runs the dispatch inline, up to its first suspension, before returning: that
  // is what keeps the start order equal to the arrival order.
  auto on_done = [self = shared_from_this(), seq, api_key, correlation_id](std::exception_ptr e, Response r) {
    self->complete(seq, e, std::move(r), api_key, correlation_id);
  };
  try {
    asio::co_spawn(socket_.get_executor(), state_->dispatcher.dispatch(std::move(req)), std::move(on_done));
  } catch (...) {
    complete(seq, std::current_exception(), Response{}, api_key, correlation_id);
  }
}

void Connection::complete(uint64_t seq, std::exception_ptr error, Response response,
                          int16_t api_key, int32_t correlation_id) {
  if (error) {
    std::string what = "non-standard exception";
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    state_->log->error("connection {} from {}: request api_key={} correlation_id={} failed: {}; closing",
                       context_.id, context_.peer, api_key, correlation_id, what);
    close();
    return;
  }
  if (closed_ || seq < front_seq_) return;  // its slot was dropped when the connection closed
  Slot& slot = slots_[seq - front_seq_];
  slot.response = std::move(response);
  slot.ready = true;
  if (seq == front_seq_ && writer_waiting_) notify(writer_wake_);
}

// ---- writer ------------------------------------------------------------------------------

asio::awaitable<bool> Connection::flush() {
  if (iov_.empty()) co_return true;
  boost::system::error_code ec;
  if (tls_) {
    // Gathered first: the TLS stream would make a record (and a write) of every buffer.
    tls_out_.resize(asio::buffer_size(iov_));
    asio::buffer_copy(asio::buffer(tls_out_), iov_);
    std::tie(ec, std::ignore) = co_await asio::async_write(*tls_, asio::buffer(tls_out_), kAwait);
    if (tls_out_.capacity() > kTlsFileChunk) std::vector<std::byte>().swap(tls_out_);
  } else {
    std::tie(ec, std::ignore) = co_await asio::async_write(socket_, iov_, kAwait);
  }
  iov_.clear();
  if (ec) {
    if (ec != asio::error::operation_aborted) {
      state_->log->debug("connection {} from {}: write: {}", context_.id, context_.peer, ec.message());
    }
    co_return false;
  }
  touch();
  co_return !closed_;
}

asio::awaitable<bool> Connection::send_slice(const brokerd::FileSlice& slice) {
  try {
    co_await ensure_resident(state_->blocking, slice);
  } catch (const std::exception& e) {
    state_->log->error("connection {}: reading file range for sendfile: {}", context_.id, e.what());
    co_return false;
  }
  off_t offset = static_cast<off_t>(slice.position);
  size_t left = slice.size;
  while (left > 0) {
    // Checked after every suspension: once closed, the descriptor number may be reused.
    if (closed_) co_return false;
    const ssize_t n = ::sendfile(socket_.native_handle(), slice.file->fd(), &offset, left);
    if (n > 0) {
      left -= static_cast<size_t>(n);
      continue;
    }
    if (n == 0) {
      state_->log->error("connection {}: file ended {} bytes before the end of a slice", context_.id, left);
      co_return false;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN) {
      auto [ec] = co_await socket_.async_wait(tcp::socket::wait_write, kAwait);
      if (ec) co_return false;
      continue;
    }
    state_->log->debug("connection {} from {}: sendfile: {}", context_.id, context_.peer, std::strerror(errno));
    co_return false;
  }
  touch();
  co_return !closed_;
}

asio::awaitable<bool> Connection::send_slice_tls(const brokerd::FileSlice& slice) {
  try {
    co_await ensure_resident(state_->blocking, slice);
  } catch (const std::exception& e) {
    state_->log->error("connection {}: reading file range: {}", context_.id, e.what());
    co_return false;
  }
  tls_out_.resize(std::min<size_t>(slice.size, kTlsFileChunk));
  off_t offset = static_cast<off_t>(slice.position);
  size_t left = slice.size;
  while (left > 0) {
    if (closed_) co_return false;
    // Resident: pread() copies from the page cache without waiting for the disk.
    const ssize_t n = ::pread(slice.file->fd(), tls_out_.data(), std::min(left, tls_out_.size()), offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      state_->log->error("connection {}: reading file range: {}", context_.id,
                         n == 0 ? std::string("the file ended early") : std::string(std::strerror(errno)));
      co_return false;
    }
    auto [ec, written] = co_await asio::async_write(*tls_, asio::buffer(tls_out_.data(), static_cast<size_t>(n)), kAwait);
    if (ec) {
      state_->log->debug("connection {} from {}: write: {}", context_.id, context_.peer, ec.message());
      co_return false;
    }
    offset += n;
    left -= static_cast<size_t>(n);
  }
  touch();
  co_return !closed_;
}

void Connection::pop_slots(size_t count) {
  int64_t bytes = 0;
  for (size_t i = 0; i < count; ++i) {
    Slot& front = slots_.front();
    bytes += front.request_bytes;
    if (front.principal_bytes) front.principal_bytes->fetch_sub(front.request_bytes, std::memory_order_relaxed);
    slots_.pop_front();
    ++front_seq_;
  }
  inflight_bytes_ -= bytes;
  state_->queued_bytes.fetch_sub(bytes, std::memory_order_relaxed);
  if (reader_waiting_) notify(reader_wake_);
}

asio::awaitable<void> Connection::writer() {
  bool graceful = false;
  for (;;) {
    while (!closed_ && (slots_.empty() || !slots_.front().ready)) {
      if (slots_.empty() && reader_done_) break;
      writer_waiting_ = true;
      co_await wait(writer_wake_, 24h);
      writer_waiting_ = false;
    }
    if (closed_) break;
    if (slots_.empty()) {
      graceful = true;  // the reader is done and everything is answered
      break;
    }

    size_t count = 0;
    bool ok = true;
    bool close_after = false;
    for (size_t i = 0; ok && i < slots_.size() && slots_[i].ready; ++i) {
      Slot& s = slots_[i];
      ++count;
      if (s.response.send) {
        size_t total = 0;
        for (const auto& c : s.response.chunks) total += brokerd::chunk_size(c);
        if (total > static_cast<size_t>(INT32_MAX)) {
          state_->log->error("connection {}: response of {} bytes is too large, closing", context_.id, total);
          ok = false;
          break;
        }
        write_be32(s.prefix, static_cast<uint32_t>(total));
        iov_.push_back(asio::buffer(s.prefix, 4));
        for (const auto& c : s.response.chunks) {
          if (const auto* b = std::get_if<brokerd::Bytes>(&c)) {
            if (!b->empty()) iov_.push_back(asio::buffer(b->data(), b->size()));
          } else if (const auto* sb = std::get_if<brokerd::SharedBytes>(&c)) {
            if (sb->size() > 0) iov_.push_back(asio::buffer(sb->data.data(), sb->size()));
          } else {
            const auto& slice = std::get<brokerd::FileSlice>(c);
            if (slice.size == 0) continue;
            if (!(ok = co_await flush())) break;
            if (tls_) {
              if (!(ok = co_await send_slice_tls(slice))) break;
            } else if (!(ok = co_await send_slice(slice))) {
              break;
            }
          }
        }
      }
      if (s.response.close_after) {
        close_after = true;
        break;
      }
      if (iov_.size() >= kMaxGatherBuffers) break;
    }
    if (ok) ok = co_await flush();
    iov_.clear();
    if (!ok) break;
    pop_slots(count);
    if (close_after) {
      graceful = true;
      break;
    }
  }

  if (graceful && !closed_) {
    boost::system::error_code ec;
    socket_.shutdown(tcp::socket::shutdown_send, ec);
  }
  close();
  // Whatever was not written is dropped; give its budget back.
  pop_slots(slots_.size());
}

// ---- idle watchdog -----------------------------------------------------------------------

asio::awaitable<void> Connection::watchdog() {
  const auto idle = std::chrono::milliseconds(state_->config.connections_max_idle_ms);
  while (!closed_) {
    const auto now = std::chrono::steady_clock::now();
    auto deadline = last_activity_ + idle;
    if (now >= deadline) {
      if (slots_.empty()) {
        state_->log->debug("connection {} from {}: idle for {} ms, closing", context_.id,
                           context_.peer, idle.count());
        close();
        break;
      }
      deadline = now + idle;  // a request is in flight: not idle
    }
    idle_timer_.expires_at(deadline);
    co_await idle_timer_.async_wait(kAwait);
  }
}

}  // namespace brokerd::net
