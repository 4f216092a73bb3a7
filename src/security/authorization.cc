#include "brokerd/security/authorization.h"

#include <fmt/format.h>

#include "brokerd/config/broker_config.h"

namespace brokerd::security {

namespace {
// Kafka's KRaft authorizer, and its ZooKeeper-era name that configurations still carry.
constexpr std::string_view kStandardAuthorizer = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";
constexpr std::string_view kAclAuthorizer = "kafka.security.authorizer.AclAuthorizer";
}  // namespace

Authorization::Authorization(const config::BrokerConfig& cfg) {
  const std::string& name = cfg.raw("authorizer.class.name");
  if (name.empty()) return;
  if (name != kStandardAuthorizer && name != kAclAuthorizer)
    throw config::ConfigError(fmt::format("authorizer.class.name: '{}' is not provided; use {} (or leave it empty "
                                          "to authorize nothing)", name, kStandardAuthorizer));
  enabled = true;
  // Kafka separates super users with semicolons (principals may contain commas).
  const std::string& users = cfg.raw("super.users");
  size_t start = 0;
  while (start <= users.size()) {
    size_t semi = users.find(';', start);
    if (semi == std::string::npos) semi = users.size();
    std::string u = users.substr(start, semi - start);
    while (!u.empty() && u.front() == ' ') u.erase(u.begin());
    while (!u.empty() && u.back() == ' ') u.pop_back();
    if (!u.empty()) rules.super_users.push_back(std::move(u));
    start = semi + 1;
  }
  rules.allow_everyone_if_no_acl_found = cfg.boolean("allow.everyone.if.no.acl.found");
}

std::string_view Authorization::client_host(std::string_view peer) {
  const auto colon = peer.rfind(':');
  std::string_view host = colon == std::string_view::npos ? peer : peer.substr(0, colon);
  constexpr std::string_view mapped = "::ffff:";
  if (host.size() > mapped.size() && host.substr(0, mapped.size()) == mapped &&
      host.find('.') != std::string_view::npos)
    host.remove_prefix(mapped.size());
  return host;
}

}  // namespace brokerd::security
