#include "brokerd/common/byte_text.h"
#include "brokerctl/security.h"

#include <fstream>
#include <map>

#include "brokerctl/client.h"
#include "brokerd/auth/plain.h"
#include "brokerd/auth/scram.h"
#include "brokerd/protocol/messages/sasl_authenticate_request.h"
#include "brokerd/protocol/messages/sasl_authenticate_response.h"
#include "brokerd/protocol/messages/sasl_handshake_request.h"
#include "brokerd/protocol/messages/sasl_handshake_response.h"

namespace brokerctl {

using brokerd::bytes_of;
using brokerd::text_of;
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

}  // namespace

std::map<std::string, std::string> read_properties(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read " + path);
  std::map<std::string, std::string> props;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    line = trim(line);
    if (line.empty() || line[0] == '#' || line[0] == '!') continue;
    const auto eq = line.find_first_of("=:");
    if (eq == std::string::npos) throw UsageError(path + ":" + std::to_string(number) + ": expected KEY=VALUE");
    props[trim(line.substr(0, eq))] = trim(line.substr(eq + 1));
  }
  return props;
}

ClientSecurity load_command_config(const std::string& path) {
  const auto props = read_properties(path);
  ClientSecurity s;
  for (const auto& [key, value] : props) {
    if (key == "security.protocol") {
      s.protocol = value;
    } else if (key == "sasl.mechanism" || key == "sasl.mechanisms") {
      s.mechanism = value;
    } else if (key == "sasl.username") {
      s.username = value;
    } else if (key == "sasl.password") {
      s.password = value;
    } else if (key == "sasl.jaas.config") {
      try {
        auto options = brokerd::auth::jaas_options(value);
        if (options.count("username")) s.username = options["username"];
        if (options.count("password")) s.password = options["password"];
      } catch (const std::invalid_argument& e) {
        throw UsageError(path + ": sasl.jaas.config: " + e.what());
      }
    } else if (key.rfind("ssl.", 0) == 0) {
      throw UsageError(path + ": " + key + ": TLS is not supported by this brokerctl yet");
    }
    // Other client properties (client.id, request.timeout.ms, ...) do not concern brokerctl.
  }
  if (s.protocol == "SSL" || s.protocol == "SASL_SSL")
    throw UsageError(path + ": security.protocol " + s.protocol + ": TLS is not supported by this brokerctl yet");
  if (s.protocol != "PLAINTEXT" && s.protocol != "SASL_PLAINTEXT")
    throw UsageError(path + ": security.protocol must be PLAINTEXT or SASL_PLAINTEXT, not '" + s.protocol + "'");
  if (s.sasl()) {
    if (s.mechanism.empty()) s.mechanism = "PLAIN";  // Kafka's default sasl.mechanism is GSSAPI; we serve PLAIN
    if (s.mechanism != "PLAIN" && !brokerd::auth::scram_mechanism(s.mechanism))
      throw UsageError(path + ": sasl.mechanism must be PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512, not '" + s.mechanism + "'");
    if (s.username.empty() || s.password.empty())
      throw UsageError(path + ": SASL needs sasl.username and sasl.password (or sasl.jaas.config with both)");
  }
  return s;
}

void authenticate(Connection& conn, const ClientSecurity& security) {
  const std::string at = conn.endpoint().to_string();
  proto::SaslHandshakeRequest hs;
  hs.mechanism = security.mechanism;
  auto hs_resp = conn.call_version<proto::SaslHandshakeResponse>(hs, int16_t{1});
  if (hs_resp.error_code != 0) {
    std::string offered;
    for (const auto& m : hs_resp.mechanisms) offered += (offered.empty() ? "" : ", ") + m;
    throw CommandError("SASL handshake with " + at + ": " + describe_error(hs_resp.error_code) +
                       (offered.empty() ? "" : " (the broker offers " + offered + ")"));
  }
  const int16_t v = conn.pick_version(proto::SaslAuthenticateRequest::api_key, 0, 2);
  auto step = [&](const std::string& token) {
    proto::SaslAuthenticateRequest req;
    req.auth_bytes = bytes_of(token);
    auto resp = conn.call_version<proto::SaslAuthenticateResponse>(req, v);
    check_error(resp.error_code, "SASL authentication with " + at, resp.error_message);
    return text_of(resp.auth_bytes);
  };
  if (security.mechanism == "PLAIN") {
    step(brokerd::auth::plain_token(security.username, security.password));
    return;
  }
  brokerd::auth::ScramClient scram(*brokerd::auth::scram_mechanism(security.mechanism), security.username,
                                   security.password);
  const std::string server_first = step(scram.first());
  auto final_message = scram.final(server_first);
  if (!final_message) throw CommandError("SASL authentication with " + at + ": malformed SCRAM challenge");
  if (!scram.verify(step(*final_message)))
    throw CommandError("SASL authentication with " + at + ": the broker did not prove it knows the credential");
}

}  // namespace brokerctl
