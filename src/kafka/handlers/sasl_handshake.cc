// SaslHandshake (17): the client names a mechanism; the answer lists the listener's
// mechanisms. After v0 the SASL tokens follow as bare frames (no request header) until the
// exchange ends; after v1 they come in SaslAuthenticate requests. The rules are in
// security/sasl_server.h; SCRAM credentials come from the metadata image.
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/security/sasl_server.h"
#include "kafka/handler.h"

namespace brokerd::kafka {

boost::asio::awaitable<net::Response> handle_sasl_handshake(HandlerContext& ctx) {
  auto req = ctx.decode<protocol::SaslHandshakeRequest>();
  auto* conn = ctx.request.connection;
  if (!conn) {
    protocol::SaslHandshakeResponse resp;
    resp.error_code = protocol::code(protocol::ErrorCode::illegal_sasl_state);
    co_return ctx.respond(resp);
  }
  auto& metadata = ctx.services.metadata;
  auto [resp, close] = security::answer_sasl_handshake(*conn, ctx.services.sasl, ctx.version, req,
                                                       [&metadata](const std::string& user, auth::ScramMechanism m) {
                                                         return metadata.image()->scram_credential(user, m);
                                                       });
  auto out = ctx.respond(resp);
  out.close_after = close;
  co_return out;
}

}  // namespace brokerd::kafka
