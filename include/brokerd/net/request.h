#pragma once
// The contract between a connection and the layer that answers requests.
//
// Ordering guarantee (Kafka clients pipeline requests and rely on it):
//  - for one connection, dispatch() coroutines are started in arrival order on the
//    connection's executor, and each one runs until its first suspension before the next one
//    is started; so work a handler does before its first co_await (e.g. appending a produce
//    batch on the partition's shard, or queueing it there) happens in request order;
//  - responses are written in request order, whatever order the dispatches complete in;
//    a Response with send == false keeps its place and writes nothing.
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "brokerd/common/bytes.h"
#include "brokerd/common/security_protocol.h"

namespace brokerd::net {

// State the protocol layer keeps per connection (a SASL exchange in progress).
struct SessionState {
  virtual ~SessionState() = default;
};

// What a handler may know about the connection a request came on. Lives as long as any
// request of the connection is being dispatched; only touched on the connection's shard.
struct ConnectionContext {
  std::string peer;      // "ip:port" of the client
  std::string listener;  // name of the listener that accepted it
  uint64_t id = 0;       // unique within the process
  size_t shard = 0;      // reactor shard the connection runs on
  SecurityProtocol security = SecurityProtocol::plaintext;

  // Who the client is: "User:ANONYMOUS" on PLAINTEXT listeners, "User:<name>" once a SASL
  // exchange succeeded.
  std::string principal = "User:ANONYMOUS";
  // False on SASL listeners until the client authenticates (the net layer then also bounds
  // frames by unauthenticated_request_max_bytes).
  bool authenticated = true;
  // KIP-368: the session ends here; the next request but a re-authentication closes it.
  std::chrono::steady_clock::time_point session_end = std::chrono::steady_clock::time_point::max();
  // SaslHandshake v0: the frames that follow are bare SASL tokens, without a request header,
  // until the exchange ends. The net layer hands each one over as a Request with
  // api_version kBareSaslToken.
  bool bare_sasl_tokens = false;
  std::unique_ptr<SessionState> session;
  // Ends with the connection, for a layer that must learn it closed (the controller, of a
  // connection that carried a broker's heartbeats).
  std::unique_ptr<SessionState> close_watch;
  // KIP-219: a client over its quota was answered at once and told to wait; the connection
  // reads no further request before this.
  std::chrono::steady_clock::time_point throttled_until{};
};

// The api_version of a bare SASL token (SaslHandshake v0); its api_key is SaslAuthenticate's.
inline constexpr int16_t kBareSaslToken = -1;

struct Request {
  int16_t api_key = 0;
  int16_t api_version = 0;
  int32_t correlation_id = 0;
  std::optional<std::string> client_id;
  // The whole frame after the 4-byte size prefix; owned, so the request body may be kept
  // (e.g. a produced batch) without copying.
  brokerd::SharedBytes frame;
  // Offset just after client_id. For flexible versions (request header v2) the header's
  // tagged-field section starts here; only the dispatcher knows the version is flexible.
  size_t header_end = 0;
  ConnectionContext* connection = nullptr;
};

struct Response {
  // Response header and body, without the 4-byte size prefix (the connection adds it).
  std::vector<brokerd::OutChunk> chunks;
  bool send = true;          // false: no response at all (Produce with acks=0)
  bool close_after = false;  // close the connection after sending (or instead, if !send)
};

class Dispatcher {
 public:
  virtual ~Dispatcher() = default;
  // Runs on the connection's executor. An exception closes that connection only.
  virtual boost::asio::awaitable<Response> dispatch(Request req) = 0;
};

}  // namespace brokerd::net
