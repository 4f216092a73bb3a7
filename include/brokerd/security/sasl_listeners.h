#pragma once
// What each SASL listener accepts, read once from the configuration: the mechanisms it
// offers (sasl.enabled.mechanisms, per listener or node-wide) and the users SASL/PLAIN
// accepts there (listener.name.<listener>.plain.sasl.jaas.config). SCRAM credentials are not
// here: they live in the metadata image, so that AlterUserScramCredentials reaches every node.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "brokerd/auth/scram.h"

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
  // How SCRAM answers unknown users (security/scram_decoy.h), set once the data directory
  // is known and before any listener serves.
  void set_scram_decoy(auth::ScramDecoy decoy) { scram_decoy_ = std::move(decoy); }
  const auth::ScramDecoy& scram_decoy() const { return scram_decoy_; }

 private:
  std::map<std::string, SaslListener> listeners_;
  int64_t session_lifetime_ms_ = 0;
  auth::ScramDecoy scram_decoy_;
};

}  // namespace brokerd::security
