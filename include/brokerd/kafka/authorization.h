#pragma once
// The authorizer's settings, read once from the configuration: whether requests are
// authorized at all (authorizer.class.name), the super users and the answer where no ACL
// applies. The ACLs themselves live in the metadata image.
#include <string>

#include "brokerd/acl/authorizer.h"

namespace brokerd::config { class BrokerConfig; }

namespace brokerd::kafka {

struct Authorization {
  bool enabled = false;
  acl::AuthorizerConfig rules;

  Authorization() = default;
  // Throws config::ConfigError for an authorizer class brokerd does not provide.
  explicit Authorization(const config::BrokerConfig& cfg);
};

}  // namespace brokerd::kafka
