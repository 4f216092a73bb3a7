#pragma once
// How a node that does not lead the metadata quorum has a metadata change made: it forwards
// the change to the active controller (the quorum's leader) over the controller listener,
// as the Kafka request that asks for it, and returns the controller's answer. The
// controller module implements it; MetadataStore uses it for every write it cannot make
// itself. An admin change is answered only once this node's image holds it too.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "brokerd/metadata/metadata_image.h"
#include "brokerd/metadata/producer_ids.h"
#include "brokerd/common/bytes.h"
#include "brokerd/protocol/error_code.h"
#include "brokerd/protocol/uuid.h"
#include "brokerd/replication/partition_state.h"

namespace brokerd::metadata {

// A topic to create: with an assignment (each partition's replicas) its size is the
// partition count and the replication factor is unused.
struct TopicSpec {
  std::string name;
  int32_t partitions = 0;
  int32_t replication_factor = 0;
  std::map<std::string, std::string> configs;
  std::vector<std::vector<int32_t>> assignment;
  // The principal asking, who will own the topic (counted by the tenant limits matching it);
  // empty for the broker's own topics.
  std::string owner;
  // A mirror topic (mirror_link.h): created on the controller only, never forwarded.
  std::string mirror_link;
  protocol::Uuid source_topic_id;
};

struct ForwardedAnswer {
  protocol::ErrorCode error = protocol::ErrorCode::none;
  std::string message;
  protocol::Uuid topic_id;  // of a created topic
};

// The controller's answer to a leader's ISR change: the partition as it now stands (or as
// it stood, when the change was refused).
struct AlterPartitionAnswer {
  protocol::ErrorCode error = protocol::ErrorCode::none;
  PartitionAssignment assignment;
};

// A leader's ISR change of one partition.
struct AlterPartitionItem {
  protocol::Uuid topic_id;
  int32_t partition = 0;
  replication::AlterPartitionRequest request;
};

class ControllerChannel {
 public:
  virtual ~ControllerChannel() = default;
  // One answer per topic, in order. The topics of one call share one owner (the first's).
  virtual std::vector<ForwardedAnswer> create_topics(const std::vector<TopicSpec>& topics) = 0;
  virtual ForwardedAnswer delete_topic(const std::string& name) = 0;
  virtual ForwardedAnswer create_partitions(const std::string& name, int32_t total,
                                            const std::vector<std::vector<int32_t>>& assignment) = 0;
  // Replaces the topic's overrides with `configs`.
  virtual ForwardedAnswer set_topic_configs(const std::string& name, const std::map<std::string, std::string>& configs) = 0;
  // Replaces the dynamic configs of a broker resource (a broker id, or "" for the cluster).
  virtual ForwardedAnswer set_broker_configs(const std::string& resource,
                                             const std::map<std::string, std::string>& configs) = 0;
  virtual std::optional<ProducerIdBlock> allocate_producer_ids(int32_t broker_id, int64_t broker_epoch) = 0;
  // One AlterPartition request for all the items; one answer per item, in order.
  virtual std::vector<AlterPartitionAnswer> alter_partitions(const std::vector<AlterPartitionItem>& items) = 0;
  // Any request the controller listener serves (DescribeQuorum from a tool), sent to the
  // quorum's leader as is; its response body, or nullopt when no leader answered in time.
  // One that may change the metadata is answered once this node's image holds the change.
  virtual std::optional<Bytes> forward(int16_t api_key, int16_t version, const Bytes& body) = 0;
  // Whether the quorum's leader serves `api_key` on its controller listener (a controller of
  // an older release may not, during a rolling upgrade). Asked with ApiVersions at most once
  // a minute per controller; true when it cannot tell (the call that follows then fails or
  // retries as any forwarded request does). Blocks: call it off the reactors.
  virtual bool leader_serves(int16_t api_key) = 0;
};

}  // namespace brokerd::metadata
