#pragma once
// IncrementalAlterConfigs (API 44) as the active controller answers it, for the controller
// listener and for a broker listener of the node that leads the metadata quorum (other
// brokers check and authorize each resource, then forward the request to it). The
// operations (SET, DELETE, APPEND, SUBTRACT) are applied to a topic's overrides or to a
// broker resource's dynamic configs as the controller's image holds them, under the store's
// write mutex: two clients changing different keys of one resource at once both keep theirs.
//
//   apply_config_ops        the operations on one resource's set (no store: unit-testable)
//   check_config_keys       a resource naming a key twice (checked on the broker, as Kafka does)
//   answer_incremental_alter_configs  the controller's answer, one result per resource
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "brokerd/protocol/error_code.h"
#include "brokerd/protocol/messages/incremental_alter_configs_request.h"
#include "brokerd/protocol/messages/incremental_alter_configs_response.h"

namespace brokerd::config {
class BrokerConfig;
}

namespace brokerd::metadata {

class MetadataStore;

inline constexpr int16_t kIncrementalAlterConfigs = 44, kIncrementalAlterConfigsMaxVersion = 1;

// ConfigResource.Type of the resources IncrementalAlterConfigs changes.
inline constexpr int8_t kTopicConfigResource = 2, kBrokerConfigResource = 4;

// AlterableConfig.ConfigOperation.
enum ConfigOp : int8_t { kConfigSet = 0, kConfigDelete = 1, kConfigAppend = 2, kConfigSubtract = 3 };

struct ConfigRefusal {
  protocol::ErrorCode error = protocol::ErrorCode::none;
  std::string message;
};

// The value in force of a key the resource does not set: where APPEND and SUBTRACT start.
using ConfigInForce = std::function<std::string(const std::string& name)>;

// Applies `res`'s operations, in order, to `configs` (the resource's current set), or
// returns the refusal that stops them all (then `configs` is left half changed: discard it).
// `broker` says which key rules apply: a topic knows only topic properties; a broker stores
// any key. Either way APPEND and SUBTRACT take LIST keys only.
std::optional<ConfigRefusal> apply_config_ops(const protocol::IncrementalAlterConfigsRequest::AlterConfigsResource& res,
                                              std::map<std::string, std::string>& configs, bool broker,
                                              const ConfigInForce& in_force);

// INVALID_REQUEST when `res` names a key twice; nullopt otherwise.
std::optional<ConfigRefusal> check_config_keys(const protocol::IncrementalAlterConfigsRequest::AlterConfigsResource& res);

// One answer per resource, in order. NOT_CONTROLLER off the controller (the broker that
// forwarded it asks the next one). `statics` is this node's static config: the value in force
// of a key that no dynamic layer sets. Blocks until the changes commit: call it off the
// reactors.
protocol::IncrementalAlterConfigsResponse answer_incremental_alter_configs(
    MetadataStore& store, const protocol::IncrementalAlterConfigsRequest& req, const config::BrokerConfig& statics);

}  // namespace brokerd::metadata
