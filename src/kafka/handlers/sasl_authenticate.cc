// SaslAuthenticate (36): the SASL tokens of the mechanism SaslHandshake chose (the rules are
// in security/sasl_server.h). A failure is answered with SASL_AUTHENTICATION_FAILED and
// closes the connection, as Kafka does. After SaslHandshake v0 the same steps come as bare
// tokens, without request headers, and a failure just closes.
#include "brokerd/common/byte_text.h"
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
  if (!conn) {
    protocol::SaslAuthenticateResponse resp;
    resp.error_code = protocol::code(protocol::ErrorCode::illegal_sasl_state);
    co_return ctx.respond(resp);
  }
  auto [resp, close] = security::answer_sasl_authenticate(*conn, ctx.services.sasl, req);
  auto out = ctx.respond(resp);
  out.close_after = close;
  co_return out;
}

}  // namespace brokerd::kafka
