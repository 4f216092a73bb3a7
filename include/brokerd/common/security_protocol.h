#pragma once
// Kafka's security protocols, with the codes BrokerRegistration and RegisterBrokerRecord use.
#include <cstdint>
#include <optional>
#include <string_view>

namespace brokerd {

enum class SecurityProtocol : int16_t { plaintext = 0, ssl = 1, sasl_plaintext = 2, sasl_ssl = 3 };

inline std::optional<SecurityProtocol> parse_security_protocol(std::string_view name) {
  if (name == "PLAINTEXT") return SecurityProtocol::plaintext;
  if (name == "SSL") return SecurityProtocol::ssl;
  if (name == "SASL_PLAINTEXT") return SecurityProtocol::sasl_plaintext;
  if (name == "SASL_SSL") return SecurityProtocol::sasl_ssl;
  return std::nullopt;
}

inline std::string_view security_protocol_name(SecurityProtocol p) {
  switch (p) {
    case SecurityProtocol::plaintext: return "PLAINTEXT";
    case SecurityProtocol::ssl: return "SSL";
    case SecurityProtocol::sasl_plaintext: return "SASL_PLAINTEXT";
    case SecurityProtocol::sasl_ssl: return "SASL_SSL";
  }
  return "PLAINTEXT";
}

inline bool uses_sasl(SecurityProtocol p) {
  return p == SecurityProtocol::sasl_plaintext || p == SecurityProtocol::sasl_ssl;
}

}  // namespace brokerd
