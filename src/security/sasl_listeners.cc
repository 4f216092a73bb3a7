#include "brokerd/security/sasl_listeners.h"

#include <fmt/format.h>

#include <cctype>

#include "brokerd/auth/plain.h"
#include "brokerd/common/logger.h"
#include "brokerd/config/broker_config.h"

namespace brokerd::security {

SaslListeners::SaslListeners(const config::BrokerConfig& cfg)
    : session_lifetime_ms_(cfg.integer("connections.max.reauth.ms")) {
  for (const auto& ep : cfg.listeners()) {
    if (!uses_sasl(cfg.security_protocol(ep.listener))) continue;
    SaslListener l;
    std::string lower = ep.listener;
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::string jaas_key = "listener.name." + lower + ".plain.sasl.jaas.config";
    const std::string jaas = cfg.listener_setting(ep.listener, "plain.sasl.jaas.config");
    if (!jaas.empty()) {
      try {
        l.plain_users = auth::plain_users_from_jaas(jaas);
      } catch (const std::invalid_argument& e) {
        throw config::ConfigError(fmt::format("{}: {}", jaas_key, e.what()));
      }
    }
    std::string mechanisms = cfg.listener_setting(ep.listener, "sasl.enabled.mechanisms");
    size_t start = 0;
    while (start < mechanisms.size()) {
      size_t comma = mechanisms.find(',', start);
      if (comma == std::string::npos) comma = mechanisms.size();
      std::string m = mechanisms.substr(start, comma - start);
      start = comma + 1;
      if (m == "PLAIN" && l.plain_users.empty()) {
        module_logger("kafka")->info("listener {}: PLAIN is not offered, {} names no users", ep.listener, jaas_key);
        continue;
      }
      if (!m.empty()) l.mechanisms.push_back(std::move(m));
    }
    if (l.mechanisms.empty())
      throw config::ConfigError(fmt::format("listener {} is {} but offers no SASL mechanism (sasl.enabled.mechanisms, {})",
                                            ep.listener, security_protocol_name(cfg.security_protocol(ep.listener)),
                                            jaas_key));
    listeners_.emplace(ep.listener, std::move(l));
  }
}

const SaslListener* SaslListeners::find(const std::string& listener) const {
  auto it = listeners_.find(listener);
  return it == listeners_.end() ? nullptr : &it->second;
}

}  // namespace brokerd::security
