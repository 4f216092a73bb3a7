#pragma once
// A topic's effective settings: its overrides over the broker's defaults.
#include <map>
#include <string>
#include <utility>

#include "brokerd/protocol/error_code.h"

namespace brokerd::metadata {

using ConfigMap = std::map<std::string, std::string>;

// Effective value of every topic property: overrides first, then broker defaults.
ConfigMap effective_topic_config(const ConfigMap& broker_defaults, const ConfigMap& overrides);

// Checks topic-level overrides: known names and valid values. Returns INVALID_CONFIG with a
// message naming the first bad entry, or none. Normalises values in place.
std::pair<protocol::ErrorCode, std::string> validate_topic_configs(ConfigMap& configs);

}  // namespace brokerd::metadata
