#pragma once
// A topic's effective settings (metadata::effective_topic_config) as the settings of its
// partitions' logs.
#include "brokerd/metadata/topic_config.h"
#include "brokerd/storage/log_config.h"

namespace brokerd::partitions {

// Values are assumed valid (metadata::validate_topic_configs checked them on the way in).
storage::LogConfig make_log_config(const metadata::ConfigMap& effective);

}  // namespace brokerd::partitions
