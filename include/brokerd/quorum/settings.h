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

// With controller.quorum.voters empty the node is a quorum of one (its only voter, needing
// no controller listener). Throws config::ConfigError with one line for a configuration
// that cannot work (this node has the controller role but is not a voter, or is a voter
// without the controller role; no controller listener; a voter entry that disagrees with
// this node's own controller listener; a dedicated controller without other voters).
QuorumOptions quorum_options_from(const config::BrokerConfig& cfg, const std::string& cluster_id);

// Refuses (config::ConfigError, one line) a metadata directory that was written by another
// set of voters than the one configured: its log could be truncated away by the others'
// (and the node would then delete its partitions). A node that ran alone before the quorum
// existed (entries, no quorum-state file) may only be a quorum of one.
void check_metadata_dir(const QuorumOptions& options);

// process.roles names `role` ("broker" or "controller").
bool has_role(const config::BrokerConfig& cfg, const std::string& role);

// True when the quorum has other voters to talk to (the controller listener is needed).
bool networked(const QuorumOptions& options);

// The id of the cluster this node belongs to, when its configuration fixes one: cluster.id
// if set (Kafka's base64 form of a 16-byte id), else, for a node of a quorum with voters
// other than itself, an id derived from controller.quorum.voters, so that every node configured with
// the same voters agrees on it without a format step. nullopt for a node alone (its first
// start picks a random id). Throws config::ConfigError for a malformed cluster.id.
std::optional<std::string> cluster_id_from(const config::BrokerConfig& cfg);

// The listener names that belong to the controller (never advertised to clients).
bool is_controller_listener(const config::BrokerConfig& cfg, const std::string& listener_name);

}  // namespace brokerd::quorum
