#pragma once
// The TLS of an SSL or SASL_SSL listener, from its ssl.* settings: listener.name.<listener>.ssl.*
// first, then the node-wide ones, as Kafka reads them.
#include <memory>
#include <string>

#include "brokerd/net/tls.h"

namespace brokerd::config { class BrokerConfig; }

namespace brokerd::security {

// Throws config::ConfigError naming the setting that is missing or wrong (a file that cannot
// be read, a key that does not match its certificate, a rule that does not parse).
std::shared_ptr<net::TlsServerContext> tls_listener(const config::BrokerConfig& cfg, const std::string& listener);

// The listener's ssl.* settings as the net layer takes them (the files not read yet).
net::TlsSettings tls_settings(const config::BrokerConfig& cfg, const std::string& listener);

}  // namespace brokerd::security
