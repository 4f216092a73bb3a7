#pragma once
// The authorizer's settings, read once from the configuration: whether requests are
// authorized at all (authorizer.class.name), the super users and the answer where no ACL
// applies. The ACLs themselves live in the metadata image.
#include <string>
#include <string_view>

#include "brokerd/acl/authorizer.h"

namespace brokerd::config { class BrokerConfig; }

namespace brokerd::security {

struct Authorization {
  bool enabled = false;
  acl::AuthorizerConfig rules;

  Authorization() = default;
  // Throws config::ConfigError for an authorizer class brokerd does not provide.
  explicit Authorization(const config::BrokerConfig& cfg);

  // Whether `principal`, connected from `peer` ("ip:port"), may do `op` on the resource, by
  // the bindings of `index`; always true when no authorizer is configured.
  bool allows(const acl::Index& index, std::string_view principal, std::string_view peer, acl::Operation op,
              acl::ResourceType type, std::string_view name) const {
    return !enabled || index.authorize(rules, principal, client_host(peer), op, type, name);
  }

  // "10.0.0.1" of "10.0.0.1:52344" (and "::1" of "::1:52344"). An IPv4 client of a
  // dual-stack listener shows as "::ffff:10.0.0.1": it is "10.0.0.1" to the bindings, so that
  // a binding on its address (a DENY above all) applies whichever way it came in.
  static std::string_view client_host(std::string_view peer);
};

}  // namespace brokerd::security
