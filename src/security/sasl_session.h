#pragma once
// A connection's SASL state, kept in its ConnectionContext: the mechanism SaslHandshake
// chose and, for SCRAM, the exchange in progress. Only touched on the connection's shard.
#include <memory>
#include <string>

#include "brokerd/auth/scram.h"
#include "brokerd/net/request.h"

namespace brokerd::security {

struct SaslSession : net::SessionState {
  // failed: an exchange failed; the connection is closing and nothing more is answered on it
  // (so a client cannot pipeline password guesses behind a refused one).
  enum class Stage { none, handshaken, authenticated, failed };
  Stage stage = Stage::none;
  std::string mechanism;            // as the client named it in SaslHandshake
  std::unique_ptr<auth::ScramServer> scram;
  std::string user;                 // the authenticated user; a re-authentication must keep it
};

// Ends the connection's SASL session for good: nothing but the closing answer goes out,
// and a connection that had authenticated before (a failed re-authentication) is served no
// more either.
inline void fail_session(net::ConnectionContext& c, SaslSession& s) {
  s.stage = SaslSession::Stage::failed;
  s.scram.reset();
  c.authenticated = false;
  c.bare_sasl_tokens = false;
}

// The connection's session, made on first use.
inline SaslSession& sasl_session(net::ConnectionContext& c) {
  if (!c.session) c.session = std::make_unique<SaslSession>();
  return static_cast<SaslSession&>(*c.session);
}

}  // namespace brokerd::security
