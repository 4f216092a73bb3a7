#pragma once
// A connection's SASL state, kept in its ConnectionContext: the mechanism SaslHandshake
// chose and, for SCRAM, the exchange in progress. Only touched on the connection's shard.
#include <memory>
#include <string>

#include "brokerd/auth/scram.h"
#include "brokerd/net/request.h"

namespace brokerd::kafka {

struct SaslSession : net::SessionState {
  enum class Stage { none, handshaken, authenticated };
  Stage stage = Stage::none;
  std::string mechanism;            // as the client named it in SaslHandshake
  std::unique_ptr<auth::ScramServer> scram;
  std::string user;                 // the authenticated user; a re-authentication must keep it
};

// The connection's session, made on first use.
inline SaslSession& sasl_session(net::ConnectionContext& c) {
  if (!c.session) c.session = std::make_unique<SaslSession>();
  return static_cast<SaslSession&>(*c.session);
}

}  // namespace brokerd::kafka
