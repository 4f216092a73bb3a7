#include "brokerd/net/bound_address.h"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace brokerd::net {

void throw_cannot_listen(int err, const std::string& host, uint16_t port, const std::string& what) {
  throw std::system_error(std::error_code(err, std::generic_category()),
                          "cannot listen on " + host + ":" + std::to_string(port) + " (" + what + ")");
}

BoundAddress::BoundAddress(const std::string& host, uint16_t port, const std::string& what) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV | AI_ADDRCONFIG;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  // "" (every interface) is IPv4's any address, as the servers have always bound it.
  const char* node = host.empty() ? "0.0.0.0" : host.c_str();
  if (int rc = ::getaddrinfo(node, service.c_str(), &hints, &found); rc != 0) {
    throw std::system_error(std::error_code(EADDRNOTAVAIL, std::generic_category()),
                            "cannot listen on " + host + ":" + service + " (" + what + "): " + ::gai_strerror(rc));
  }
  const addrinfo& a = *found;  // the first address, as the servers resolve it
  int fd = ::socket(a.ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int err = fd < 0 ? errno : 0;
  const int on = 1;
  if (!err && ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0) err = errno;
  if (!err && ::bind(fd, a.ai_addr, a.ai_addrlen) != 0) err = errno;
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  if (!err && ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len) != 0) err = errno;
  family_ = a.ai_family;
  ::freeaddrinfo(found);
  if (err) {
    if (fd >= 0) ::close(fd);
    throw_cannot_listen(err, host, port, what);
  }
  fd_ = fd;
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6&>(bound).sin6_port
                                            : reinterpret_cast<sockaddr_in&>(bound).sin_port);
}

BoundAddress::~BoundAddress() {
  if (fd_ >= 0) ::close(fd_);
}

int BoundAddress::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

}  // namespace brokerd::net
