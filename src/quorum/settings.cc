#include "brokerd/quorum/settings.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>

#include "brokerd/config/broker_config.h"
#include "brokerd/protocol/uuid.h"
#include "brokerd/security/sasl_client.h"
#include "brokerd/raft/disk_quorum_state.h"

namespace brokerd::quorum {

bool is_controller_listener(const config::BrokerConfig& cfg, const std::string& listener_name) {
  return listener_name == cfg.raw("controller.listener.names");
}

void check_metadata_dir(const QuorumOptions& options) {
  using config::ConfigError;
  namespace fs = std::filesystem;
  std::vector<raft::ReplicaId> configured;
  for (const auto& v : options.voters) configured.push_back(v.id);
  std::sort(configured.begin(), configured.end());
  std::error_code ec;
  if (fs::exists(options.dir / raft::DiskQuorumStateStore::kFileName, ec)) {
    auto recorded = raft::DiskQuorumStateStore(options.dir).recorded_voters();
    std::sort(recorded.begin(), recorded.end());
    if (!recorded.empty() && recorded != configured) {
      throw ConfigError(fmt::format(
          "controller.quorum.voters: {} was written by a quorum of voters {} but {} are configured; changing the voters "
          "is not supported yet",
          options.dir.string(), fmt::join(recorded, ","), fmt::join(configured, ",")));
    }
    return;
  }
  if (!networked(options)) return;
  for (const auto& e : fs::directory_iterator(options.dir, ec)) {
    if (e.path().extension() == ".log" && e.file_size(ec) > 0) {
      throw ConfigError(fmt::format("controller.quorum.voters: {} holds the metadata of a node that ran alone; moving a "
                                    "single node into a quorum of several is not supported yet",
                                    options.dir.string()));
    }
  }
}

std::optional<std::string> cluster_id_from(const config::BrokerConfig& cfg) {
  const std::string configured = cfg.raw("cluster.id");
  if (!configured.empty()) {
    if (!protocol::Uuid::from_string(configured))
      throw config::ConfigError(fmt::format("cluster.id: '{}' is not a 22-character base64 id", configured));
    return configured;
  }
  std::vector<Voter> voters;
  try {
    voters = parse_voters(cfg.raw("controller.quorum.voters"));
  } catch (const std::invalid_argument& e) {
    throw config::ConfigError(fmt::format("controller.quorum.voters: {}", e.what()));
  }
  // A node that is its quorum's only voter is alone.
  if (voters.empty() || (voters.size() == 1 && voters[0].id == cfg.node_id())) return std::nullopt;
  std::sort(voters.begin(), voters.end(), [](const Voter& a, const Voter& b) { return a.id < b.id; });
  std::string canonical;
  for (const auto& v : voters) canonical += fmt::format("{}@{}:{},", v.id, v.host, v.port);
  // Two FNV-1a hashes of the canonical voter list make the 16 bytes.
  protocol::Uuid id;
  for (int half = 0; half < 2; ++half) {
    uint64_t h = 14695981039346656037ULL ^ static_cast<uint64_t>(half);
    for (char c : canonical) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ULL;
    for (int i = 0; i < 8; ++i) id.bytes[static_cast<size_t>(half * 8 + i)] = static_cast<uint8_t>(h >> (8 * i));
  }
  id.bytes[0] &= 0x7f;  // the text form never starts with '-' or '_'
  return id.to_string();
}

bool has_role(const config::BrokerConfig& cfg, const std::string& role) {
  const auto roles = cfg.list("process.roles");
  return std::find(roles.begin(), roles.end(), role) != roles.end();
}

bool networked(const QuorumOptions& options) {
  return options.voters.size() > 1 || (options.voters.size() == 1 && options.voters[0].id != options.node_id);
}

QuorumOptions quorum_options_from(const config::BrokerConfig& cfg, const std::string& cluster_id) {
  using config::ConfigError;
  const auto roles = cfg.list("process.roles");
  const bool broker = std::find(roles.begin(), roles.end(), "broker") != roles.end();
  const bool controller = std::find(roles.begin(), roles.end(), "controller") != roles.end();
  if (!broker && !controller) throw ConfigError("process.roles: give broker, controller, or both");
  std::vector<Voter> voters;
  try {
    voters = parse_voters(cfg.raw("controller.quorum.voters"));
  } catch (const std::invalid_argument& e) {
    throw ConfigError(fmt::format("controller.quorum.voters: {}", e.what()));
  }
  const int32_t id = cfg.node_id();
  const bool alone = voters.empty();
  if (alone && !controller)
    throw ConfigError("process.roles: a node without the controller role needs controller.quorum.voters naming the controllers");
  if (alone && !broker)
    throw ConfigError("process.roles: a dedicated controller needs controller.quorum.voters naming it and the other voters");
  if (alone) voters.push_back(Voter{id, "", 0});
  auto self = std::find_if(voters.begin(), voters.end(), [&](const Voter& v) { return v.id == id; });
  if (controller && self == voters.end()) {
    throw ConfigError(fmt::format(
        "controller.quorum.voters does not name this node (node.id {}) although process.roles has controller", id));
  }
  if (!controller && self != voters.end()) {
    throw ConfigError(fmt::format(
        "controller.quorum.voters names this node (node.id {}) but process.roles has no controller role", id));
  }
  if (self != voters.end() && !alone) {
    const std::string name = cfg.raw("controller.listener.names");
    const auto listeners = cfg.listeners();
    auto l = std::find_if(listeners.begin(), listeners.end(), [&](const config::Endpoint& e) { return e.listener == name; });
    if (l == listeners.end()) {
      throw ConfigError(fmt::format("listeners: a voter of the metadata quorum needs a {}://host:port listener", name));
    }
    if (l->port != self->port) {
      throw ConfigError(fmt::format("controller.quorum.voters says node {} listens on port {}, but its {} listener is on {}",
                                    id, self->port, name, l->port));
    }
  }
  QuorumOptions o;
  o.node_id = id;
  o.cluster_id = cluster_id;
  o.voters = std::move(voters);
  std::filesystem::path base = cfg.raw("metadata.log.dir");
  if (base.empty()) base = cfg.log_dirs().front();
  o.dir = base / "__cluster_metadata-0";
  o.election_timeout_ms = cfg.integer("controller.quorum.election.timeout.ms");
  o.fetch_timeout_ms = cfg.integer("controller.quorum.fetch.timeout.ms");
  o.request_timeout_ms = cfg.integer("controller.quorum.request.timeout.ms");
  o.snapshot_bytes = cfg.integer("metadata.log.max.record.bytes.between.snapshots");
  if (!alone) o.credentials = security::node_credentials(cfg, cfg.raw("controller.listener.names"),
                                                        "sasl.mechanism.controller.protocol");
  return o;
}

}  // namespace brokerd::quorum
