#pragma once
// The metadata quorum this node takes part in, read from its configuration
// (process.roles, controller.quorum.*, controller.listener.names, metadata.log.dir).
#include <optional>
#include <string>

#include "brokerd/quorum/quorum_driver.h"

namespace brokerd::config {
class BrokerConfig;
}

namespace brokerd::quorum {

// nullopt when controller.quorum.voters is empty: the node is a cluster of one whose
// metadata log is local. Throws config::ConfigError with one line for a configuration that
// cannot work (this node has the controller role but is not a voter, or is a voter without
// the controller role; no controller listener; a voter entry that disagrees with this node's
// own controller listener; process.roles without broker).
std::optional<QuorumOptions> quorum_options_from(const config::BrokerConfig& cfg, const std::string& cluster_id);

// The listener names that belong to the controller (never advertised to clients).
bool is_controller_listener(const config::BrokerConfig& cfg, const std::string& listener_name);

}  // namespace brokerd::quorum
