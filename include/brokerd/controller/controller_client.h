#pragma once
// A blocking client of another node's listener, for this node's own calls from a thread of
// its own: to the active controller (registration, heartbeats, forwarded changes), to a
// leader (replica fetchers), to a mirror link's source. One connection, reopened after any
// failure, over TLS and authenticated first when the credentials say so; every wait bounded
// by the timeout.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "brokerd/common/bytes.h"
#include "brokerd/quorum/voters.h"
#include "brokerd/security/sasl_client.h"

namespace brokerd::controller {

class ControllerClient {
 public:
  ControllerClient(std::string client_id, int timeout_ms, security::ClientCredentials credentials = {});
  ~ControllerClient();
  ControllerClient(const ControllerClient&) = delete;
  ControllerClient& operator=(const ControllerClient&) = delete;

  // Sends a request body to `to` and returns the response body (after its header), or
  // nullopt when the call failed (the connection is then closed). The body is a view of a
  // buffer that the next call reuses once nobody holds it any more (a fetch answer's batches
  // are appended straight from it, then let go).
  std::optional<SharedBytes> call(const quorum::Voter& to, int16_t api_key, int16_t version, const Bytes& body);
  void close();
  // From now on every wait of a call fails at once, a wait in progress on another thread too
  // (for an owner that stops). The only member another thread may call.
  void interrupt();
  // Whether a connection is open (the next call reuses it).
  bool connected() const { return stream_ != nullptr; }
  // Why the last call failed when the node refused it ("authentication to host:port failed:
  // <the listener's message>", or the TLS handshake's failure); empty otherwise.
  const std::string& refusal() const { return refusal_; }

 private:
  struct Buffer {
    std::unique_ptr<std::byte[]> data;  // not zeroed: every answer is read over it
    size_t capacity = 0;
  };
  // Answers up to this size keep their buffer for the next call.
  static constexpr size_t kMaxKeptBuffer = 8u << 20;

  bool connect(const quorum::Voter& to);
  // The kept buffer when it is free and large enough, else a new one (kept if not too large).
  std::shared_ptr<Buffer> buffer_for(size_t size);
  // Keeps `why` for refusal() and logs `log_line` (the same one at most once a minute).
  void note_refusal(std::string why, const std::string& log_line);
  // One request and its answer on the open connection; nullopt (and closed) on failure.
  std::optional<SharedBytes> exchange(int16_t api_key, int16_t version, const Bytes& body);

  std::string client_id_;
  int timeout_ms_;
  security::ClientCredentials credentials_;
  std::string refusal_;
  std::string last_refusal_;  // the last failed authentication, logged at most once a minute
  int64_t last_refusal_ms_ = 0;
  std::unique_ptr<net::ClientStream> stream_;
  int32_t connected_to_ = -1;
  int32_t correlation_ = 0;
  std::shared_ptr<Buffer> spare_;
  int wake_fd_ = -1;  // an eventfd, readable once interrupted (-1 if none could be made)
};

}  // namespace brokerd::controller
