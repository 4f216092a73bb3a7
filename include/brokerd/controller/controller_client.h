#pragma once
// A blocking client of one controller listener, for the broker's own calls to the active
// controller (registration, heartbeats) from a thread of its own. One connection, reopened
// after any failure; every wait bounded by the timeout.
#include <cstdint>
#include <optional>
#include <string>

#include "brokerd/common/bytes.h"
#include "brokerd/quorum/voters.h"

namespace brokerd::controller {

class ControllerClient {
 public:
  ControllerClient(std::string client_id, int timeout_ms) : client_id_(std::move(client_id)), timeout_ms_(timeout_ms) {}
  ~ControllerClient() { close(); }
  ControllerClient(const ControllerClient&) = delete;
  ControllerClient& operator=(const ControllerClient&) = delete;

  // Sends a request body to `to` and returns the response body (after its header), or
  // nullopt when the call failed (the connection is then closed).
  std::optional<Bytes> call(const quorum::Voter& to, int16_t api_key, int16_t version, const Bytes& body);
  void close();

 private:
  bool connect(const quorum::Voter& to);
  bool write_all(const Bytes& frame);
  bool read_exact(std::byte* p, size_t n);

  std::string client_id_;
  int timeout_ms_;
  int fd_ = -1;
  int32_t connected_to_ = -1;
  int32_t correlation_ = 0;
};

}  // namespace brokerd::controller
