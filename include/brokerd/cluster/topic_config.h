#pragma once
// A topic's effective settings: its overrides over the broker's defaults.
#include <map>
#include <string>

#include "brokerd/storage/log_config.h"

namespace brokerd::cluster {

using ConfigMap = std::map<std::string, std::string>;

// Effective value of every topic property: overrides first, then broker defaults.
ConfigMap effective_topic_config(const ConfigMap& broker_defaults, const ConfigMap& overrides);

// The storage settings of a partition log. Values are assumed valid (checked on the way in).
storage::LogConfig make_log_config(const ConfigMap& effective);

}  // namespace brokerd::cluster
