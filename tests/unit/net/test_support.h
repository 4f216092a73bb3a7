#pragma once
// Helpers for the net tests: a blocking TCP client with bounded waits, a scriptable
// dispatcher, and a way to run a coroutine on a reactor and wait for it.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "brokerd/net/request.h"

namespace brokerd::net::test {

using namespace std::chrono_literals;

// Big-endian encoding of a request: size prefix, header v1, body.
std::vector<std::byte> encode_request(int16_t api_key, int32_t correlation_id,
                                      const std::string& body,
                                      std::optional<std::string> client_id = "test");

class Client {
 public:
  explicit Client(uint16_t port);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  void send_raw(const std::vector<std::byte>& bytes);
  void send(int16_t api_key, int32_t correlation_id, const std::string& body) {
    send_raw(encode_request(api_key, correlation_id, body));
  }
  // One response frame (without the size prefix); nullopt on timeout or close.
  std::optional<std::vector<std::byte>> receive(std::chrono::milliseconds timeout = 5000ms);
  // Reads a response and returns its correlation id and the rest as a string.
  std::optional<std::pair<int32_t, std::string>> receive_echo(std::chrono::milliseconds timeout = 5000ms);
  // True when the server closes the connection within the timeout (no data expected).
  bool closed_within(std::chrono::milliseconds timeout);
  void shutdown_write();
  int fd() const { return fd_; }

 private:
  bool read_exact(void* out, size_t n, std::chrono::steady_clock::time_point deadline);
  int fd_ = -1;
};

// A dispatcher whose behaviour each test supplies.
class FnDispatcher : public Dispatcher {
 public:
  using Fn = std::function<boost::asio::awaitable<Response>(Request)>;
  explicit FnDispatcher(Fn fn) : fn_(std::move(fn)) {}
  boost::asio::awaitable<Response> dispatch(Request req) override { return fn_(std::move(req)); }

 private:
  Fn fn_;
};

// The echo response the tests use: correlation id, then the request body.
Response echo_response(const Request& req);
std::string body_of(const Request& req);

boost::asio::awaitable<void> sleep_for(std::chrono::milliseconds d);

// Runs a coroutine on `ex` and waits for its result (at most 10 s, else throws).
template <typename T>
T run_sync(boost::asio::any_io_executor ex, std::function<boost::asio::awaitable<T>()> fn) {
  std::promise<T> done;
  auto fut = done.get_future();
  boost::asio::co_spawn(ex, fn(), [&done](std::exception_ptr e, T v) {
    if (e) {
      done.set_exception(e);
    } else {
      done.set_value(std::move(v));
    }
  });
  if (fut.wait_for(10s) != std::future_status::ready) throw std::runtime_error("run_sync timed out");
  return fut.get();
}

// Polls `cond` until it holds or the timeout passes.
bool eventually(const std::function<bool()>& cond, std::chrono::milliseconds timeout = 5000ms);

}  // namespace brokerd::net::test
