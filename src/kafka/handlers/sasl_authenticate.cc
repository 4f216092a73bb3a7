// SaslAuthenticate (36): the SASL tokens of the mechanism SaslHandshake chose (the rules are
// in security/sasl_server.h). A failure is answered with SASL_AUTHENTICATION_FAILED and
// closes the connection, as Kafka does. After SaslHandshake v0 the same steps come as bare
// tokens, without request headers, and a failure just closes.
#include "brokerd/common/byte_text.h"
#include "brokerd/protocol/messages/sasl_authenticate_request.h"
#include "brokerd/protocol/messages/sasl_authenticate_response.h"
#include "brokerd/security/sasl_server.h"
#include "kafka/handler.h"

namespace brokerd::kafka {

boost::asio::awaitable<net::Response> handle_sasl_authenticate(HandlerContext& ctx) {
  auto* conn = ctx.request.connection;
  if (ctx.version == net::kBareSaslToken) {
    const auto raw = ctx.body.take(ctx.body.remaining());
    const std::string token(reinterpret_cast<const char*>(raw.data()), raw.size());
    auto answer = security::sasl_authenticate(*conn, ctx.services.sasl, token);
    if (answer.error != protocol::ErrorCode::none) co_return net::Response{{}, false, true};
    net::Response out;
    out.chunks.emplace_back(bytes_of(answer.reply));
    co_return out;
  }
  auto req = ctx.decode<protocol::SaslAuthenticateRequest>();
  protocol::SaslAuthenticateResponse resp;
  if (!conn) {
    resp.error_code = protocol::code(protocol::ErrorCode::illegal_sasl_state);
    co_return ctx.respond(resp);
  }
  auto answer = security::sasl_authenticate(*conn, ctx.services.sasl, text_of(req.auth_bytes));
  resp.error_code = protocol::code(answer.error);
  if (!answer.message.empty()) resp.error_message = std::move(answer.message);
  // Not a SASL listener: refused, as Kafka does, and the connection stays.
  const bool stays = answer.error == protocol::ErrorCode::illegal_sasl_state && !uses_sasl(conn->security);
  if (answer.error != protocol::ErrorCode::none) {
    auto out = ctx.respond(resp);
    out.close_after = !stays;
    co_return out;
  }
  resp.auth_bytes = bytes_of(answer.reply);
  resp.session_lifetime_ms = answer.session_lifetime_ms;
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
