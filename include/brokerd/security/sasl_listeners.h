#pragma once
// What each SASL listener accepts, read once from the configuration: the mechanisms it
// offers (sasl.enabled.mechanisms, per listener or node-wide) and the users SASL/PLAIN
// accepts there (listener.name.<listener>.plain.sasl.jaas.config). SCRAM credentials are not
// here: they live in the metadata image, so that AlterUserScramCredentials reaches every node.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace brokerd::config { class BrokerConfig; }

namespace brokerd::security {

struct SaslListener {
  std::vector<std::string> mechanisms;                // in the order the configuration lists them
  std::map<std::string, std::string> plain_users;     // user -> password
};

class SaslListeners {
 public:
  SaslListeners() = default;
  // Throws config::ConfigError naming the setting when a JAAS entry does not parse. PLAIN
  // is offered only where users are configured for it.
  explicit SaslListeners(const config::BrokerConfig& cfg);

  // nullptr for a listener that is not SASL_*.
  const SaslListener* find(const std::string& listener) const;
  // connections.max.reauth.ms: 0, or how long a session lasts before re-authentication.
  int64_t session_lifetime_ms() const { return session_lifetime_ms_; }

 private:
  std::map<std::string, SaslListener> listeners_;
  int64_t session_lifetime_ms_ = 0;
};

}  // namespace brokerd::security
