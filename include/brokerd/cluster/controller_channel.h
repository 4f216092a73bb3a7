#pragma once
// How a node that does not lead the metadata quorum has a metadata change made: it forwards
// the change to the active controller (the quorum's leader) over the controller listener,
// as the Kafka request that asks for it, and returns the controller's answer. The
// controller module implements it; MetadataStore uses it for every write it cannot make
// itself.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "brokerd/cluster/producer_ids.h"
#include "brokerd/protocol/error_code.h"
#include "brokerd/protocol/uuid.h"

namespace brokerd::cluster {

struct ForwardedAnswer {
  protocol::ErrorCode error = protocol::ErrorCode::none;
  std::string message;
  protocol::Uuid topic_id;  // of a created topic
};

class ControllerChannel {
 public:
  virtual ~ControllerChannel() = default;
  virtual ForwardedAnswer create_topic(const std::string& name, int32_t partitions, int32_t replication_factor,
                                       const std::map<std::string, std::string>& configs,
                                       const std::vector<std::vector<int32_t>>& assignment) = 0;
  virtual ForwardedAnswer delete_topic(const std::string& name) = 0;
  virtual ForwardedAnswer create_partitions(const std::string& name, int32_t total,
                                            const std::vector<std::vector<int32_t>>& assignment) = 0;
  // Replaces the topic's overrides with `configs`.
  virtual ForwardedAnswer set_topic_configs(const std::string& name, const std::map<std::string, std::string>& configs) = 0;
  virtual std::optional<ProducerIdBlock> allocate_producer_ids(int32_t broker_id, int64_t broker_epoch) = 0;
};

}  // namespace brokerd::cluster
