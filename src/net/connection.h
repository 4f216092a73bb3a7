#pragma once
// One client connection: a reader coroutine (frames in, dispatches started in arrival
// order), a writer coroutine (responses out in request order) and an idle watchdog, all on
// the connection's shard, so its state needs no locks. On a TLS listener the reader first
// completes the handshake; reads and writes then go through the TLS stream, and file ranges
// are read and encrypted instead of sent with sendfile().
#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstddef>
#include <deque>
#include <exception>
#include <memory>
#include <vector>

#include "brokerd/net/request.h"
#include "server_state.h"

namespace brokerd::net {

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // `tls`: the context of a TLS listener's connection, null on a plaintext one. `address`:
  // the client address the server counted it under (Server::State::admit), released at its end.
  Connection(std::shared_ptr<Server::State> state, boost::asio::ip::tcp::socket socket,
             const Listener& listener, size_t shard, std::shared_ptr<boost::asio::ssl::context> tls,
             std::string address);

  // On the connection's shard: registers it and starts its coroutines.
  void start();
  // Stop reading; answer what is in flight, then close.
  void drain();
  // Close now; responses not yet written are dropped.
  void close();

  uint64_t id() const { return context_.id; }

 private:
  // A response slot, in request order. Its address is stable while it is queued (deque).
  struct Slot {
    Response response;
    int64_t request_bytes = 0;
    Server::State::PrincipalBytes principal_bytes;  // the principal's count it adds to
    bool ready = false;
    std::byte prefix[4];
  };
  // A frame buffer; requests alias it, and it is reused once nobody holds it any more.
  struct FrameBuffer {
    std::unique_ptr<std::byte[]> data;
    size_t capacity = 0;
  };

  boost::asio::awaitable<void> reader();
  boost::asio::awaitable<void> writer();
  boost::asio::awaitable<void> watchdog();

  // TLS: the server handshake within the listener's bound, then the client's principal
  // from its certificate (SSL listeners).
  boost::asio::awaitable<bool> handshake();
  boost::asio::awaitable<bool> fill(size_t want);
  // Waits until the frame may be read: the connection's bounds, and the node-wide and
  // principal budgets unless the frame is `independent` (see answers_alone()).
  boost::asio::awaitable<bool> wait_for_budget(int64_t frame_size, bool independent);
  boost::asio::awaitable<bool> flush();
  boost::asio::awaitable<bool> send_slice(const brokerd::FileSlice& slice);
  boost::asio::awaitable<bool> send_slice_tls(const brokerd::FileSlice& slice);
  std::shared_ptr<FrameBuffer> acquire_buffer(size_t size);
  // SO_RCVLOWAT: while the body of a large frame is read, wake only when much of it is
  // there, so a megabyte arrives in a few reads instead of dozens.
  void set_receive_low_water(size_t bytes);
  // Reads the rest of a frame that did not fit the staging buffer straight into its buffer.
  boost::asio::awaitable<bool> read_body(std::byte* out, size_t left);
  void start_dispatch(std::shared_ptr<FrameBuffer> buffer, size_t size);
  void complete(uint64_t seq, std::exception_ptr error, Response response, int16_t api_key,
                int32_t correlation_id);
  void pop_slots(size_t count);
  void coroutine_done();
  void touch() { last_activity_ = std::chrono::steady_clock::now(); }
  static void notify(boost::asio::steady_timer& event) { event.cancel(); }
  boost::asio::awaitable<void> wait(boost::asio::steady_timer& event,
                                    std::chrono::steady_clock::duration timeout);

  std::shared_ptr<Server::State> state_;
  const Listener& listener_;
  boost::asio::ip::tcp::socket socket_;
  std::shared_ptr<boost::asio::ssl::context> tls_context_;
  std::unique_ptr<boost::asio::ssl::stream<boost::asio::ip::tcp::socket&>> tls_;
  std::vector<std::byte> tls_out_;  // a TLS write gathered into one buffer (one record per 16 KiB)
  ConnectionContext context_;
  const std::string address_;

  // Read-ahead buffer: small frames are copied out of it, large ones read in place.
  std::unique_ptr<std::byte[]> stage_;
  size_t stage_begin_ = 0;
  size_t stage_end_ = 0;
  int receive_low_water_ = 1;
  std::vector<std::shared_ptr<FrameBuffer>> spare_buffers_;

  std::deque<Slot> slots_;
  uint64_t front_seq_ = 0;  // sequence number of slots_.front()
  uint64_t next_seq_ = 0;
  int64_t inflight_bytes_ = 0;
  // The count of the principal this connection has now (it changes when SASL names one).
  Server::State::PrincipalBytes principal_bytes_;
  std::string principal_counted_;
  std::vector<boost::asio::const_buffer> iov_;

  boost::asio::steady_timer reader_wake_;
  boost::asio::steady_timer writer_wake_;
  boost::asio::steady_timer idle_timer_;
  boost::asio::steady_timer handshake_timer_;
  boost::asio::cancellation_signal read_cancel_;
  std::chrono::steady_clock::time_point last_activity_;

  bool draining_ = false;
  bool closed_ = false;
  bool reader_done_ = false;
  bool writer_waiting_ = false;
  bool reader_waiting_ = false;
  int running_ = 0;
};

}  // namespace brokerd::net
