#include "brokerd/auth/client_properties.h"

#include <stdexcept>

#include "brokerd/auth/plain.h"
#include "brokerd/auth/scram.h"

namespace brokerd::auth {

ClientProperties parse_client_properties(const std::map<std::string, std::string>& properties) {
  ClientProperties c;
  for (const auto& [key, value] : properties) {
    if (key == "security.protocol") {
      c.protocol = value;
    } else if (key == "sasl.mechanism" || key == "sasl.mechanisms") {
      c.mechanism = value;
    } else if (key == "sasl.username") {
      c.user = value;
    } else if (key == "sasl.password") {
      c.password = value;
    } else if (key == "sasl.jaas.config") {
      try {
        auto options = jaas_options(value);
        if (options.count("username")) c.user = options["username"];
        if (options.count("password")) c.password = options["password"];
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("sasl.jaas.config: ") + e.what());
      }
    } else if (key == "ssl.ca.location" || key == "ssl.truststore.location") {
      c.ca_file = value;
    } else if (key == "ssl.certificate.location") {
      c.cert_file = value;
    } else if (key == "ssl.key.location") {
      c.key_file = value;
    } else if (key == "ssl.keystore.location") {
      c.cert_file = c.key_file = value;
    } else if (key == "ssl.key.password") {
      c.key_password = value;
    } else if (key == "ssl.endpoint.identification.algorithm") {
      if (value != "" && value != "https" && value != "none")
        throw std::invalid_argument("ssl.endpoint.identification.algorithm must be https or empty, not '" + value + "'");
      c.verify_hostname = value == "https";
    } else if ((key == "ssl.keystore.type" || key == "ssl.truststore.type") && value != "PEM") {
      throw std::invalid_argument(key + " must be PEM, not '" + value + "'");
    }
  }
  if (c.protocol != "PLAINTEXT" && c.protocol != "SASL_PLAINTEXT" && c.protocol != "SSL" && c.protocol != "SASL_SSL")
    throw std::invalid_argument("security.protocol must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL, not '" + c.protocol +
                                "'");
  if (!c.key_file.empty() && c.cert_file.empty())
    throw std::invalid_argument("ssl.key.location needs ssl.certificate.location");
  c.tls = c.protocol == "SSL" || c.protocol == "SASL_SSL";
  if (c.protocol == "PLAINTEXT" || c.protocol == "SSL") {
    c.mechanism.clear();
    c.user.clear();
    c.password.clear();
    return c;
  }
  if (c.mechanism.empty()) c.mechanism = "PLAIN";
  if (c.mechanism != "PLAIN" && !scram_mechanism(c.mechanism))
    throw std::invalid_argument("sasl.mechanism must be PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512, not '" + c.mechanism + "'");
  if (c.user.empty() || c.password.empty())
    throw std::invalid_argument("SASL needs sasl.username and sasl.password (or sasl.jaas.config with both)");
  return c;
}

}  // namespace brokerd::auth
