#include "brokerd/security/sasl_server.h"

#include <algorithm>
#include <chrono>

#include "brokerd/auth/plain.h"
#include "brokerd/common/byte_text.h"
#include "brokerd/common/logger.h"
#include "brokerd/security/sasl_listeners.h"
#include "security/sasl_session.h"

namespace brokerd::security {

namespace {

using protocol::ErrorCode;

// ApiVersions and SASL's own requests are the only ones a connection may send before it has
// authenticated, or once its session ended (to re-authenticate).
bool before_authentication(int16_t api_key) { return api_key == 18 || api_key == 17 || api_key == 36; }

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

}  // namespace

const char* unauthenticated(const net::Request& req) {
  const auto* c = req.connection;
  if (!c || !uses_sasl(c->security) || before_authentication(req.api_key)) return nullptr;
  if (!c->authenticated) return "before it authenticated";
  if (std::chrono::steady_clock::now() >= c->session_end) return "after its session ended (connections.max.reauth.ms)";
  return nullptr;
}

HandshakeAnswer sasl_handshake(net::ConnectionContext& conn, const SaslListeners& listeners, int16_t version,
                               const std::string& mechanism, ScramLookup lookup) {
  const SaslListener* listener = listeners.find(conn.listener);
  // Not a SASL listener: refused, as Kafka does, and the connection stays.
  if (!listener) return {ErrorCode::illegal_sasl_state, {}, false};
  HandshakeAnswer out{ErrorCode::none, listener->mechanisms, false};
  auto refuse = [&](ErrorCode e) {
    out.error = e;
    out.close = true;
    return out;
  };
  auto& session = sasl_session(conn);
  if (session.stage == SaslSession::Stage::handshaken || session.stage == SaslSession::Stage::failed) {
    fail_session(conn, session);
    return refuse(ErrorCode::illegal_sasl_state);
  }
  const bool reauthenticating = session.stage == SaslSession::Stage::authenticated;
  // KIP-368: re-authentication needs v1 (the tokens then travel in SaslAuthenticate).
  if (reauthenticating && (mechanism != session.mechanism || version < 1)) {
    fail_session(conn, session);
    return refuse(ErrorCode::illegal_sasl_state);
  }
  if (std::find(listener->mechanisms.begin(), listener->mechanisms.end(), mechanism) == listener->mechanisms.end()) {
    fail_session(conn, session);
    return refuse(ErrorCode::unsupported_sasl_mechanism);
  }
  session.mechanism = mechanism;
  session.stage = SaslSession::Stage::handshaken;
  session.scram.reset();
  conn.bare_sasl_tokens = version == 0;
  if (auto scram = auth::scram_mechanism(mechanism)) {
    session.scram = std::make_unique<auth::ScramServer>(
        *scram, [lookup = std::move(lookup), m = *scram](const std::string& user) { return lookup(user, m); },
        listeners.scram_decoy());
  }
  return out;
}

StepAnswer sasl_authenticate(net::ConnectionContext& conn, const SaslListeners& listeners, const std::string& token) {
  static auto log = module_logger("security");
  const SaslListener* listener = listeners.find(conn.listener);
  if (!listener) return {ErrorCode::illegal_sasl_state, "This listener does not use SASL.", {}, false};
  auto& session = sasl_session(conn);
  if (session.stage != SaslSession::Stage::handshaken) {
    const bool failed = session.stage == SaslSession::Stage::failed;
    fail_session(conn, session);
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
    fail_session(conn, session);
    log->info("authentication of {} on {} with {} failed{}: {}", conn.peer, conn.listener, session.mechanism,
              step.user.empty() ? "" : " for user " + step.user, *step.error);
    return {ErrorCode::sasl_authentication_failed, *step.error, {}, false};
  }
  if (!step.done) return {ErrorCode::none, {}, std::move(step.reply), false};  // the exchange goes on
  if (!session.user.empty() && step.user != session.user) {
    fail_session(conn, session);
    log->info("re-authentication of {} on {} as {} refused: the connection belongs to {}", conn.peer, conn.listener,
              step.user, session.user);
    return {ErrorCode::sasl_authentication_failed, "Re-authentication must keep the same principal.", {}, false};
  }
  if (session.user.empty())
    log->debug("{} on {} authenticated as {} with {}", conn.peer, conn.listener, step.user, session.mechanism);
  session.user = step.user;
  session.stage = SaslSession::Stage::authenticated;
  session.scram.reset();
  conn.principal = "User:" + step.user;
  conn.authenticated = true;
  conn.bare_sasl_tokens = false;
  StepAnswer out{ErrorCode::none, {}, std::move(step.reply), true};
  if (const int64_t lifetime = listeners.session_lifetime_ms(); lifetime > 0) {
    conn.session_end = std::chrono::steady_clock::now() + std::chrono::milliseconds(lifetime);
    out.session_lifetime_ms = lifetime;
  }
  return out;
}

std::pair<protocol::SaslHandshakeResponse, bool> answer_sasl_handshake(net::ConnectionContext& conn,
                                                                       const SaslListeners& listeners, int16_t version,
                                                                       const protocol::SaslHandshakeRequest& req,
                                                                       ScramLookup lookup) {
  auto answer = sasl_handshake(conn, listeners, version, req.mechanism, std::move(lookup));
  protocol::SaslHandshakeResponse resp;
  resp.error_code = protocol::code(answer.error);
  resp.mechanisms = std::move(answer.mechanisms);
  return {std::move(resp), answer.close};
}

std::pair<protocol::SaslAuthenticateResponse, bool> answer_sasl_authenticate(
    net::ConnectionContext& conn, const SaslListeners& listeners, const protocol::SaslAuthenticateRequest& req) {
  auto answer = sasl_authenticate(conn, listeners, text_of(req.auth_bytes));
  protocol::SaslAuthenticateResponse resp;
  resp.error_code = protocol::code(answer.error);
  if (!answer.message.empty()) resp.error_message = std::move(answer.message);
  resp.auth_bytes = bytes_of(answer.reply);
  resp.session_lifetime_ms = answer.session_lifetime_ms;
  // Refused on a SASL listener: the connection closes. On another listener the request alone
  // is refused (ILLEGAL_SASL_STATE) and the connection stays, as in Kafka.
  const bool close = answer.error != protocol::ErrorCode::none && uses_sasl(conn.security);
  return {std::move(resp), close};
}

}  // namespace brokerd::security
