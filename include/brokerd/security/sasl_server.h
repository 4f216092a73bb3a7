#pragma once
// The server side of SASL on a connection, the same on client listeners and on the controller
// listener: which requests a connection may send before it has authenticated, SaslHandshake
// (the mechanism) and each SaslAuthenticate step (PLAIN against the listener's configured
// users, SCRAM against the credentials the caller looks up). The wire messages stay with the
// dispatchers; these functions hold the rules.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "brokerd/auth/scram.h"
#include "brokerd/net/request.h"
#include "brokerd/protocol/error_code.h"
#include "brokerd/protocol/messages/sasl_authenticate_request.h"
#include "brokerd/protocol/messages/sasl_authenticate_response.h"
#include "brokerd/protocol/messages/sasl_handshake_request.h"
#include "brokerd/protocol/messages/sasl_handshake_response.h"

namespace brokerd::security {

class SaslListeners;

// The SCRAM credential of a user (from the metadata image), or nullopt.
using ScramLookup = std::function<std::optional<auth::ScramCredential>(const std::string& user, auth::ScramMechanism)>;

// Why the request may not be served on its connection yet (it has not authenticated, or its
// session ended), or nullptr. ApiVersions and SASL's own requests always pass.
const char* unauthenticated(const net::Request& req);

struct HandshakeAnswer {
  protocol::ErrorCode error = protocol::ErrorCode::none;
  std::vector<std::string> mechanisms;  // what the listener offers
  bool close = false;                   // the connection closes after the answer
};
// SaslHandshake of `version` naming `mechanism`. A handshake on an authenticated connection
// starts a re-authentication (KIP-368), which must use v1+ and the same mechanism.
HandshakeAnswer sasl_handshake(net::ConnectionContext& conn, const SaslListeners& listeners, int16_t version,
                               const std::string& mechanism, ScramLookup lookup);

struct StepAnswer {
  protocol::ErrorCode error = protocol::ErrorCode::none;  // a failure closes the connection
  std::string message;
  std::string reply;                // the server's token
  bool done = false;                // authenticated
  int64_t session_lifetime_ms = 0;  // when done and connections.max.reauth.ms is set
};
// One SaslAuthenticate step (or bare token after SaslHandshake v0). On success the
// connection takes the principal User:<name>.
StepAnswer sasl_authenticate(net::ConnectionContext& conn, const SaslListeners& listeners, const std::string& token);

// The same as wire answers, for every dispatcher: the response, and whether the connection
// closes after it (a refused exchange on a SASL listener; a request on another listener is
// refused and the connection stays, as in Kafka).
std::pair<protocol::SaslHandshakeResponse, bool> answer_sasl_handshake(net::ConnectionContext& conn,
                                                                       const SaslListeners& listeners, int16_t version,
                                                                       const protocol::SaslHandshakeRequest& req,
                                                                       ScramLookup lookup);
std::pair<protocol::SaslAuthenticateResponse, bool> answer_sasl_authenticate(
    net::ConnectionContext& conn, const SaslListeners& listeners, const protocol::SaslAuthenticateRequest& req);

}  // namespace brokerd::security
