#pragma once
// The security settings of a Kafka client's properties, read and checked without connecting:
// what a node presents to another cluster (mirror links) or to its own peers.
#include <map>
#include <string>

namespace brokerd::auth {

struct ClientProperties {
  std::string protocol = "PLAINTEXT";  // PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL
  std::string mechanism;               // PLAIN, SCRAM-SHA-256, SCRAM-SHA-512; empty: no SASL
  std::string user;
  std::string password;
  bool tls = false;  // SSL, SASL_SSL: the settings below apply
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  std::string key_password;
  bool verify_hostname = true;
};

// Kafka's Java names or librdkafka's where they differ: security.protocol, sasl.mechanism
// (default PLAIN: Kafka's default, GSSAPI, is not spoken), sasl.username and sasl.password or
// the username and password options of sasl.jaas.config; for TLS ssl.ca.location or
// ssl.truststore.location (PEM), ssl.certificate.location and ssl.key.location or
// ssl.keystore.location (PEM, key and chain in one file), ssl.key.password, and
// ssl.endpoint.identification.algorithm (https, the default, checks the server's name; empty
// does not). Other properties are not looked at. Throws std::invalid_argument naming the
// property that cannot be used.
ClientProperties parse_client_properties(const std::map<std::string, std::string>& properties);

}  // namespace brokerd::auth
