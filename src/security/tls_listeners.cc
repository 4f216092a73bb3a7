#include "brokerd/security/tls_listeners.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "brokerd/config/broker_config.h"
#include "brokerd/security/principal_mapping.h"

namespace brokerd::security {

namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(start, comma - start);
    const auto first = item.find_first_not_of(" \t");
    const auto last = item.find_last_not_of(" \t");
    if (first != std::string::npos) out.push_back(item.substr(first, last - first + 1));
    start = comma + 1;
  }
  return out;
}

}  // namespace

net::TlsSettings tls_settings(const config::BrokerConfig& cfg, const std::string& listener) {
  auto get = [&](const char* name) { return cfg.listener_setting(listener, name); };
  net::TlsSettings s;
  s.listener = listener;
  s.keystore_location = get("ssl.keystore.location");
  s.key_pem = get("ssl.keystore.key");
  s.chain_pem = get("ssl.keystore.certificate.chain");
  s.key_password = get("ssl.key.password");
  s.truststore_location = get("ssl.truststore.location");
  s.truststore_pem = get("ssl.truststore.certificates");
  const std::string auth = get("ssl.client.auth");
  s.client_auth = auth == "required"    ? net::ClientAuth::required
                  : auth == "requested" ? net::ClientAuth::requested
                                        : net::ClientAuth::none;
  const auto protocols = split_list(get("ssl.enabled.protocols"));
  s.tls12 = std::find(protocols.begin(), protocols.end(), "TLSv1.2") != protocols.end();
  s.tls13 = std::find(protocols.begin(), protocols.end(), "TLSv1.3") != protocols.end();
  s.cipher_suites = split_list(get("ssl.cipher.suites"));
  s.handshake_timeout = std::chrono::milliseconds(cfg.integer("ssl.handshake.timeout.ms"));
  if (!s.keystore_location.empty() && (!s.key_pem.empty() || !s.chain_pem.empty()))
    throw config::ConfigError(fmt::format("listener {}: set ssl.keystore.location or ssl.keystore.key with "
                                          "ssl.keystore.certificate.chain, not both", listener));
  if (!s.truststore_location.empty() && !s.truststore_pem.empty())
    throw config::ConfigError(fmt::format("listener {}: set ssl.truststore.location or ssl.truststore.certificates, "
                                          "not both", listener));
  return s;
}

std::shared_ptr<net::TlsServerContext> tls_listener(const config::BrokerConfig& cfg, const std::string& listener) {
  net::TlsSettings s = tls_settings(cfg, listener);
  auto mapping = std::make_shared<const PrincipalMapping>(cfg.listener_setting(listener, "ssl.principal.mapping.rules"));
  s.principal_of = [mapping](const std::string& subject) -> std::optional<std::string> {
    auto user = mapping->user_of(subject);
    if (!user) return std::nullopt;
    return "User:" + *user;
  };
  try {
    return net::TlsServerContext::make(std::move(s));
  } catch (const std::runtime_error& e) {
    throw config::ConfigError(e.what());
  }
}

}  // namespace brokerd::security
