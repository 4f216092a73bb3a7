#include "brokerd/controller/controller_client.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/protocol/framing.h"

namespace brokerd::controller {

namespace {

bool wait_for(int fd, short events, int timeout_ms) {
  pollfd p{fd, events, 0};
  for (;;) {
    int rc = ::poll(&p, 1, timeout_ms);
    if (rc > 0) return (p.revents & (events | POLLHUP | POLLERR)) != 0;
    if (rc == 0) return false;
    if (errno != EINTR) return false;
  }
}

}  // namespace

void ControllerClient::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  connected_to_ = -1;
}

bool ControllerClient::connect(const quorum::Voter& to) {
  if (fd_ >= 0 && connected_to_ == to.id) return true;
  close();
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(to.host.c_str(), std::to_string(to.port).c_str(), &hints, &res) != 0 || !res) return false;
  for (addrinfo* a = res; a; a = a->ai_next) {
    int fd = ::socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) continue;
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    int err = 0;
    socklen_t len = sizeof err;
    if (rc == 0 || (errno == EINPROGRESS && wait_for(fd, POLLOUT, timeout_ms_) &&
                    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0)) {
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      fd_ = fd;
      connected_to_ = to.id;
      break;
    }
    ::close(fd);
  }
  ::freeaddrinfo(res);
  if (fd_ < 0 || !credentials_.enabled()) return fd_ >= 0;
  auto refused = security::authenticate(credentials_, [this](int16_t api_key, int16_t version, const Bytes& body) {
    return exchange(api_key, version, body);
  });
  if (!refused) return true;
  refusal_ = *refused;
  // Callers retry every few hundred ms: the same refusal is logged again only after a while.
  const int64_t now = steady_clock_ms();
  if (*refused != last_refusal_ || now - last_refusal_ms_ > 60'000) {
    module_logger("security")->warn("authentication to node {} at {}:{} failed: {}", to.id, to.host, to.port, *refused);
    last_refusal_ = *refused;
    last_refusal_ms_ = now;
  }
  close();
  return false;
}

bool ControllerClient::write_all(const Bytes& frame) {
  size_t done = 0;
  while (done < frame.size()) {
    ssize_t n = ::send(fd_, frame.data() + done, frame.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!wait_for(fd_, POLLOUT, timeout_ms_)) return false;
    } else {
      return false;
    }
  }
  return true;
}

bool ControllerClient::read_exact(std::byte* p, size_t n) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::recv(fd_, p + done, n - done, 0);
    if (r > 0) {
      done += static_cast<size_t>(r);
    } else if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!wait_for(fd_, POLLIN, timeout_ms_)) return false;
    } else {
      return false;
    }
  }
  return true;
}

std::optional<Bytes> ControllerClient::call(const quorum::Voter& to, int16_t api_key, int16_t version,
                                            const Bytes& body) {
  refusal_.clear();
  if (!connect(to)) return std::nullopt;
  return exchange(api_key, version, body);
}

std::optional<Bytes> ControllerClient::exchange(int16_t api_key, int16_t version, const Bytes& body) {
  const int32_t correlation = ++correlation_;
  protocol::Writer w;
  protocol::encode_request_header(w, api_key, version, correlation, client_id_);
  w.raw(body);
  if (!write_all(protocol::with_size_prefix(std::move(w).finish_bytes()))) {
    close();
    return std::nullopt;
  }
  std::byte size_buf[4];
  if (!read_exact(size_buf, 4)) {
    close();
    return std::nullopt;
  }
  const uint32_t size = protocol::size_prefix(size_buf);
  if (size < 4 || size > (16u << 20)) {
    close();
    return std::nullopt;
  }
  Bytes frame(size);
  if (!read_exact(frame.data(), size)) {
    close();
    return std::nullopt;
  }
  try {
    protocol::Reader r(frame);
    if (protocol::decode_response_header(r, api_key, version) != correlation) {
      close();
      return std::nullopt;
    }
    return Bytes(frame.end() - static_cast<ptrdiff_t>(r.remaining()), frame.end());
  } catch (const protocol::DecodeError&) {
    close();
    return std::nullopt;
  }
}

}  // namespace brokerd::controller
