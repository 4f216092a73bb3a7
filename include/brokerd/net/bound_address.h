#pragma once
// A listening address bound ahead of its server. A node binds every port it will serve on
// before it takes part in the quorum, so that a port held by another process stops it before
// it sends or answers anything. Nothing listens on it yet: connections are refused until the
// server that adopts the socket starts.
#include <cstdint>
#include <string>

namespace brokerd::net {

class BoundAddress {
 public:
  // Binds host:port ("" or "0.0.0.0": every interface; port 0: any free one) with
  // SO_REUSEADDR. Throws std::system_error "cannot listen on host:port (what): <reason>".
  BoundAddress(const std::string& host, uint16_t port, const std::string& what);
  ~BoundAddress();
  BoundAddress(const BoundAddress&) = delete;
  BoundAddress& operator=(const BoundAddress&) = delete;

  // The bound socket, now the caller's to listen on and close; -1 once taken.
  int release();
  int family() const { return family_; }
  uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  int family_ = 0;
  uint16_t port_ = 0;
};

// The error a failed bind or listen of `what` throws, naming the address.
[[noreturn]] void throw_cannot_listen(int err, const std::string& host, uint16_t port, const std::string& what);

}  // namespace brokerd::net
