// SaslAuthenticate (36): the SASL tokens of the mechanism SaslHandshake chose. PLAIN takes
// one step against the listener's configured users; SCRAM two, against the credentials in
// the metadata image. Success makes the connection's principal User:<name>; a failure is
// answered with SASL_AUTHENTICATION_FAILED and closes the connection, as Kafka does.
// After SaslHandshake v0 the same steps come as bare tokens, without request headers.
#include <chrono>
#include <cstring>

#include "brokerd/common/byte_text.h"
#include "brokerd/auth/plain.h"
#include "brokerd/common/logger.h"
#include "brokerd/kafka/sasl_listeners.h"
#include "brokerd/protocol/messages/sasl_authenticate_request.h"
#include "brokerd/protocol/messages/sasl_authenticate_response.h"
#include "kafka/handler.h"
#include "kafka/sasl_session.h"

namespace brokerd::kafka {
namespace {

using protocol::ErrorCode;

struct Outcome {
  std::string reply;
  bool done = false;
  std::optional<std::string> error;
  std::string user;
};

Outcome plain_step(const SaslListener& listener, const std::string& token) {
  auto parsed = auth::parse_plain(token);
  if (!parsed) return {{}, false, "Authentication failed: malformed PLAIN token", {}};
  auto it = listener.plain_users.find(parsed->user);
  // Compare against something even for an unknown user, so timing does not tell users apart.
  const std::string& expected = it == listener.plain_users.end() ? parsed->password + "x" : it->second;
  if (!auth::equal_secret(parsed->password, expected))
    return {{}, false, "Authentication failed: Invalid username or password", parsed->user};
  return {{}, true, std::nullopt, parsed->user};
}

// One step of the exchange on the connection; on success the connection takes the principal.
struct StepAnswer {
  ErrorCode error = ErrorCode::none;
  std::string message;
  std::string reply;
  bool done = false;
};

StepAnswer sasl_step(HandlerContext& ctx, const std::string& token) {
  static auto log = module_logger("kafka");
  auto* conn = ctx.request.connection;
  const SaslListener* listener = ctx.services.sasl.find(conn->listener);
  auto& session = sasl_session(*conn);
  if (session.stage != SaslSession::Stage::handshaken) {
    const bool failed = session.stage == SaslSession::Stage::failed;
    fail_session(*conn, session);
    return {ErrorCode::illegal_sasl_state,
            failed ? "The exchange failed; the connection is closing." : "SaslAuthenticate before SaslHandshake.", {},
            false};
  }
  Outcome step;
  if (session.scram) {
    auto s = session.scram->step(token);
    step = {std::move(s.reply), s.done, std::move(s.error), s.done ? session.scram->user() : std::string()};
  } else {
    step = plain_step(*listener, token);
  }
  if (step.error) {
    fail_session(*conn, session);
    log->info("authentication of {} on {} with {} failed{}: {}", conn->peer, conn->listener, session.mechanism,
              step.user.empty() ? "" : " for user " + step.user, *step.error);
    return {ErrorCode::sasl_authentication_failed, *step.error, {}, false};
  }
  if (!step.done) return {ErrorCode::none, {}, std::move(step.reply), false};  // the exchange goes on
  if (!session.user.empty() && step.user != session.user) {
    fail_session(*conn, session);
    log->info("re-authentication of {} on {} as {} refused: the connection belongs to {}", conn->peer, conn->listener,
              step.user, session.user);
    return {ErrorCode::sasl_authentication_failed, "Re-authentication must keep the same principal.", {}, false};
  }
  if (session.user.empty())
    log->debug("{} on {} authenticated as {} with {}", conn->peer, conn->listener, step.user, session.mechanism);
  session.user = step.user;
  session.stage = SaslSession::Stage::authenticated;
  session.scram.reset();
  conn->principal = "User:" + step.user;
  conn->authenticated = true;
  conn->bare_sasl_tokens = false;
  if (const int64_t lifetime = ctx.services.sasl.session_lifetime_ms(); lifetime > 0)
    conn->session_end = std::chrono::steady_clock::now() + std::chrono::milliseconds(lifetime);
  return {ErrorCode::none, {}, std::move(step.reply), true};
}

}  // namespace

boost::asio::awaitable<net::Response> handle_sasl_authenticate(HandlerContext& ctx) {
  auto* conn = ctx.request.connection;
  if (ctx.version == net::kBareSaslToken) {
    // After SaslHandshake v0: the token came bare, the answer goes bare, a failure closes.
    const auto raw = ctx.body.take(ctx.body.remaining());
    const std::string token(reinterpret_cast<const char*>(raw.data()), raw.size());
    auto answer = sasl_step(ctx, token);
    if (answer.error != ErrorCode::none) co_return net::Response{{}, false, true};
    net::Response out;
    out.chunks.emplace_back(bytes_of(answer.reply));
    co_return out;
  }
  auto req = ctx.decode<protocol::SaslAuthenticateRequest>();
  protocol::SaslAuthenticateResponse resp;
  if (!conn || !ctx.services.sasl.find(conn->listener)) {
    // Not a SASL listener: refused, as Kafka does, and the connection stays.
    resp.error_code = protocol::code(ErrorCode::illegal_sasl_state);
    resp.error_message = "This listener does not use SASL.";
    co_return ctx.respond(resp);
  }
  auto answer = sasl_step(ctx, text_of(req.auth_bytes));
  resp.error_code = protocol::code(answer.error);
  if (answer.error != ErrorCode::none) {
    resp.error_message = std::move(answer.message);
    auto out = ctx.respond(resp);
    out.close_after = true;
    co_return out;
  }
  resp.auth_bytes = bytes_of(answer.reply);
  if (answer.done && conn->session_end != std::chrono::steady_clock::time_point::max())
    resp.session_lifetime_ms = ctx.services.sasl.session_lifetime_ms();
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
