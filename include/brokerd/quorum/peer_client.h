#pragma once
// One outbound connection to another node's listener, used only on the thread of its
// executor: the quorum driver's to the other voters' controller listeners, and the HTTP API's
// to other brokers' inter-broker listener (http/node_links.h). Requests are pipelined and
// answered in order. Any failure (connect, write, read, a request unanswered for too long)
// closes the connection and fails every pending request; the caller resends what it still needs. A connection that must
// authenticate (a SASL controller listener) does so before it counts as connected; the
// connect timeout covers the exchange.
#include <boost/asio/any_io_executor.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "brokerd/common/bytes.h"
#include "brokerd/quorum/voters.h"
#include "brokerd/security/sasl_client.h"

namespace brokerd::quorum {

class PeerClient {
 public:
  // The response body (after the response header), or nullopt when the request failed;
  // `refused` then says the connection was refused (nothing listens at the peer's address).
  using Done = std::function<void(std::optional<Bytes> body, bool refused)>;

  // With credentials, each new connection authenticates before any request goes out.
  PeerClient(boost::asio::any_io_executor ex, Voter peer, std::string client_id, int64_t request_timeout_ms,
             security::ClientCredentials credentials = {});
  ~PeerClient();
  PeerClient(const PeerClient&) = delete;
  PeerClient& operator=(const PeerClient&) = delete;

  // Queues a request (body without header); connects first if needed. `done` runs later on
  // the driver thread, never from inside send().
  void send(int16_t api_key, int16_t version, Bytes body, Done done);
  // Closes the connection when its oldest request has waited longer than the timeout.
  void expire(int64_t now_ms);
  void close();

  const Voter& peer() const { return peer_; }
  // Requests queued or awaiting their answer.
  size_t pending() const;

  struct State;

 private:
  std::shared_ptr<State> state_;
  Voter peer_;
};

}  // namespace brokerd::quorum
