#include "brokerctl/security.h"

#include <fstream>
#include <map>

#include "brokerctl/client.h"
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
  try {
    return brokerd::security::credentials_from_properties(read_properties(path));
  } catch (const std::invalid_argument& e) {
    throw UsageError(path + ": " + e.what());
  }
}

void authenticate(Connection& conn, const ClientSecurity& security) {
  const std::string at = conn.endpoint().to_string();
  brokerd::security::SaslClientExchange exchange(security);
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
