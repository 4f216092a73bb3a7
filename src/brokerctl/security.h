#pragma once
// How brokerctl authenticates: the client properties of --command-config FILE, in Kafka's
// Java names or librdkafka's where they differ (security.protocol, sasl.mechanism,
// sasl.username/sasl.password or sasl.jaas.config's username/password).
#include <map>
#include <string>

#include "brokerd/security/sasl_client.h"

namespace brokerctl {

// No mechanism: PLAINTEXT.
using ClientSecurity = brokerd::security::ClientCredentials;

// Client properties (KEY=VALUE or KEY:VALUE lines, # and ! comments), as Kafka's
// --command-config files hold them; a UsageError names the file and line it cannot read.
std::map<std::string, std::string> read_properties(const std::string& path);

// Reads a properties file (KEY=VALUE lines, # and ! comments). A UsageError names the file
// and the line for anything it cannot use.
ClientSecurity load_command_config(const std::string& path);

class Connection;
// SaslHandshake and SaslAuthenticate on a fresh connection; CommandError when refused.
void authenticate(Connection& conn, const ClientSecurity& security);

}  // namespace brokerctl
