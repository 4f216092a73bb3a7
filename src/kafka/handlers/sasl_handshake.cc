// SaslHandshake (17): the client names a mechanism; the answer lists the listener's
// mechanisms. After v0 the SASL tokens follow as bare frames (no request header) until the
// exchange ends; after v1 they come in SaslAuthenticate requests.
// A handshake on an authenticated connection starts a re-authentication (KIP-368), which
// must use the same mechanism.
#include "brokerd/kafka/sasl_listeners.h"
#include "brokerd/protocol/messages/sasl_handshake_request.h"
#include "brokerd/protocol/messages/sasl_handshake_response.h"
#include "kafka/handler.h"
#include "kafka/sasl_session.h"
#include "brokerd/cluster/metadata_store.h"

namespace brokerd::kafka {

using protocol::ErrorCode;

boost::asio::awaitable<net::Response> handle_sasl_handshake(HandlerContext& ctx) {
  auto req = ctx.decode<protocol::SaslHandshakeRequest>();
  protocol::SaslHandshakeResponse resp;
  auto* conn = ctx.request.connection;
  const SaslListener* listener = conn ? ctx.services.sasl.find(conn->listener) : nullptr;
  auto refuse = [&](ErrorCode e) {
    resp.error_code = protocol::code(e);
    auto out = ctx.respond(resp);
    out.close_after = true;
    return out;
  };
  if (!listener) {  // not a SASL listener: refused, as Kafka does, and the connection stays
    resp.error_code = protocol::code(ErrorCode::illegal_sasl_state);
    co_return ctx.respond(resp);
  }
  resp.mechanisms = listener->mechanisms;
  auto& session = sasl_session(*conn);
  if (session.stage == SaslSession::Stage::handshaken || session.stage == SaslSession::Stage::failed) {
    fail_session(*conn, session);
    co_return refuse(ErrorCode::illegal_sasl_state);
  }
  const bool reauthenticating = session.stage == SaslSession::Stage::authenticated;
  // KIP-368: re-authentication needs v1 (the tokens then travel in SaslAuthenticate).
  if (reauthenticating && (req.mechanism != session.mechanism || ctx.version < 1)) {
    fail_session(*conn, session);
    co_return refuse(ErrorCode::illegal_sasl_state);
  }
  if (std::find(listener->mechanisms.begin(), listener->mechanisms.end(), req.mechanism) == listener->mechanisms.end()) {
    fail_session(*conn, session);
    co_return refuse(ErrorCode::unsupported_sasl_mechanism);
  }

  session.mechanism = req.mechanism;
  session.stage = SaslSession::Stage::handshaken;
  session.scram.reset();
  conn->bare_sasl_tokens = ctx.version == 0;
  if (auto scram = auth::scram_mechanism(req.mechanism)) {
    auto& metadata = ctx.services.metadata;
    session.scram = std::make_unique<auth::ScramServer>(*scram, [&metadata, m = *scram](const std::string& user) {
      return metadata.image()->scram_credential(user, m);
    });
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
