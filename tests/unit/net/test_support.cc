#include "test_support.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cerrno>
#include <cstring>
#include <thread>

namespace brokerd::net::test {

namespace {
void put16(std::vector<std::byte>& out, uint16_t v) {
  out.push_back(std::byte(v >> 8));
  out.push_back(std::byte(v));
}
void put32(std::vector<std::byte>& out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(std::byte(v >> s));
}
uint32_t get32(const std::byte* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}
}  // namespace

std::vector<std::byte> encode_request(int16_t api_key, int32_t correlation_id, const std::string& body,
                                      std::optional<std::string> client_id) {
  std::vector<std::byte> out;
  put32(out, 0);  // patched below
  put16(out, static_cast<uint16_t>(api_key));
  put16(out, 3);  // api_version
  put32(out, static_cast<uint32_t>(correlation_id));
  if (client_id) {
    put16(out, static_cast<uint16_t>(client_id->size()));
    for (char c : *client_id) out.push_back(std::byte(c));
  } else {
    put16(out, 0xffff);
  }
  for (char c : body) out.push_back(std::byte(c));
  const uint32_t size = static_cast<uint32_t>(out.size() - 4);
  for (int i = 0; i < 4; ++i) out[i] = std::byte(size >> (24 - 8 * i));
  return out;
}

Client::Client(uint16_t port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) throw std::runtime_error("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    throw std::runtime_error(std::string("connect: ") + std::strerror(errno));
  }
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  timeval tv{10, 0};  // bounds every blocking send
  ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

Client::~Client() {
  if (fd_ >= 0) ::close(fd_);
}

void Client::send_raw(const std::vector<std::byte>& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(std::string("send: ") + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
}

bool Client::read_exact(void* out, size_t n, std::chrono::steady_clock::time_point deadline) {
  auto* p = static_cast<char*>(out);
  size_t done = 0;
  while (done < n) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd pfd{fd_, POLLIN, 0};
    int rc = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) return false;
    ssize_t r = ::recv(fd_, p + done, n - done, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    done += static_cast<size_t>(r);
  }
  return true;
}

std::optional<std::vector<std::byte>> Client::receive(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::byte size_bytes[4];
  if (!read_exact(size_bytes, 4, deadline)) return std::nullopt;
  std::vector<std::byte> frame(get32(size_bytes));
  if (!read_exact(frame.data(), frame.size(), deadline)) return std::nullopt;
  return frame;
}

std::optional<std::pair<int32_t, std::string>> Client::receive_echo(std::chrono::milliseconds timeout) {
  auto frame = receive(timeout);
  if (!frame || frame->size() < 4) return std::nullopt;
  return std::make_pair(static_cast<int32_t>(get32(frame->data())),
                        std::string(reinterpret_cast<const char*>(frame->data()) + 4, frame->size() - 4));
}

bool Client::closed_within(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd pfd{fd_, POLLIN, 0};
    int rc = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) return false;
    ssize_t r = ::recv(fd_, buf, sizeof(buf), 0);
    if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) return true;
  }
}

void Client::shutdown_write() { ::shutdown(fd_, SHUT_WR); }

Response echo_response(const Request& req) {
  Response r;
  brokerd::Bytes out;
  const auto body = req.frame.data.subspan(req.header_end);
  out.reserve(4 + body.size());
  for (int s = 24; s >= 0; s -= 8) out.push_back(std::byte(static_cast<uint32_t>(req.correlation_id) >> s));
  out.insert(out.end(), body.begin(), body.end());
  r.chunks.emplace_back(std::move(out));
  return r;
}

std::string body_of(const Request& req) {
  const auto body = req.frame.data.subspan(req.header_end);
  return std::string(reinterpret_cast<const char*>(body.data()), body.size());
}

boost::asio::awaitable<void> sleep_for(std::chrono::milliseconds d) {
  boost::asio::steady_timer t(co_await boost::asio::this_coro::executor, d);
  co_await t.async_wait(boost::asio::use_awaitable);
}

bool eventually(const std::function<bool()>& cond, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return cond();
}

}  // namespace brokerd::net::test
