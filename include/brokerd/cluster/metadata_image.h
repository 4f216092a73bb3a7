#pragma once
// An immutable snapshot of the cluster's metadata: brokers, topics, partition counts and
// topic configs. Readers hold a shared_ptr to one image; writers publish a new one.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "brokerd/protocol/uuid.h"

namespace brokerd::cluster {

// A broker as registered with the controller (RegisterBrokerRecord): where clients reach it,
// its zone, the epoch of its registration, and whether it is fenced (registered but not, or
// no longer, serving: not caught up yet, missed its heartbeats, or shut down).
struct BrokerInfo {
  int32_t node_id = 0;
  std::string host;
  int32_t port = 0;
  std::string rack;  // empty = none
  int64_t epoch = -1;
  protocol::Uuid incarnation;
  bool fenced = true;
};

struct TopicMetadata {
  std::string name;
  protocol::Uuid id;
  int32_t partitions = 0;
  int32_t replication_factor = 1;
  // Topic-level overrides only ("retention.ms" -> "3600000"); defaults come from the broker.
  std::map<std::string, std::string> configs;
  bool internal = false;
};

class MetadataImage {
 public:
  std::string cluster_id;
  std::vector<BrokerInfo> brokers;  // every registered broker, by node id
  const BrokerInfo* broker(int32_t node_id) const;
  int32_t live_brokers() const;       // registered and unfenced
  // Offset of the last metadata record applied, -1 for an empty log.
  int64_t offset = -1;
  // The first producer id of the next block to allocate (ProducerIdsRecord).
  int64_t next_producer_id = 0;

  const TopicMetadata* topic(std::string_view name) const;
  const TopicMetadata* topic(const protocol::Uuid& id) const;
  const std::map<std::string, std::shared_ptr<const TopicMetadata>, std::less<>>& topics() const { return by_name_; }

  // Builders (used only while composing a new image).
  void put_topic(std::shared_ptr<const TopicMetadata> t);
  void remove_topic(std::string_view name);

 private:
  std::map<std::string, std::shared_ptr<const TopicMetadata>, std::less<>> by_name_;
  std::map<protocol::Uuid, std::shared_ptr<const TopicMetadata>> by_id_;
};

// Kafka's rules for topic names: 1..249 characters of [a-zA-Z0-9._-], not "." or "..".
bool valid_topic_name(std::string_view name);

// Topics whose names begin with "__" are the broker's own.
inline bool is_internal_topic(std::string_view name) { return name.starts_with("__"); }

}  // namespace brokerd::cluster
