#include "brokerctl/security.h"

#include <fstream>
#include <map>

#include "brokerctl/client.h"
#include "brokerd/auth/plain.h"
#include "brokerd/auth/scram.h"
#include "brokerd/security/sasl_client.h"

namespace brokerctl {

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
  brokerd::security::SaslClientExchange exchange({security.mechanism, security.username, security.password});
  try {
    std::optional<brokerd::security::SaslClientExchange::Request> req = exchange.first();
    while (req) req = exchange.next(conn.call_raw(req->api_key, req->version, req->body));
  } catch (const brokerd::security::AuthenticationError& e) {
    throw CommandError("SASL authentication with " + at + ": " + e.what());
  } catch (const proto::DecodeError& e) {
    throw CommandError("malformed SASL answer from " + at + ": " + e.what());
  }
}

}  // namespace brokerctl
