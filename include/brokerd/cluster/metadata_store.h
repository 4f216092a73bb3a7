#pragma once
// The owner of the cluster metadata on this node: applies topic changes by appending
// KRaft metadata records to the metadata log (the single-node precursor of the controller
// quorum's log), then publishes a new MetadataImage. Readers take image() without locks;
// writers are serialised by a mutex and may block on disk, so call them off the reactors.
#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "brokerd/cluster/metadata_image.h"
#include "brokerd/cluster/producer_ids.h"
#include "brokerd/protocol/error_code.h"

namespace brokerd::cluster {

class MetadataLog;

struct TopicChange {
  protocol::ErrorCode error = protocol::ErrorCode::none;
  std::string message;  // for the response's error_message
  std::shared_ptr<const TopicMetadata> topic;
  std::shared_ptr<const MetadataImage> image;  // the image that includes the change
};

class MetadataStore {
 public:
  // Replays the metadata log in `metadata_dir` (created if missing).
  MetadataStore(std::filesystem::path metadata_dir, std::string cluster_id, BrokerInfo self);
  ~MetadataStore();

  std::shared_ptr<const MetadataImage> image() const { return image_.load(); }

  // Each validates first (name, counts, configs against the topic properties); with
  // validate_only nothing is written.
  TopicChange create_topic(const std::string& name, int32_t partitions, int32_t replication_factor,
                           const std::map<std::string, std::string>& configs, bool validate_only);
  TopicChange delete_topic(const std::string& name);
  TopicChange create_partitions(const std::string& name, int32_t total, bool validate_only);
  // Replaces the topic's overrides with `configs`.
  TopicChange set_topic_configs(const std::string& name, const std::map<std::string, std::string>& configs,
                                bool validate_only);

  // Kafka's AllocateProducerIds: the next block of producer ids for `broker_id`, made durable
  // by a ProducerIdsRecord before it is returned, so blocks never overlap across restarts.
  // Blocks on disk; throws when the metadata log cannot be written.
  ProducerIdBlock allocate_producer_ids(int32_t broker_id, int64_t broker_epoch);
  // This node's producer-id manager, fed by allocate_producer_ids.
  ProducerIdManager& producer_ids() { return *producer_ids_; }

  void close();

 private:
  void publish(std::shared_ptr<MetadataImage> next);

  std::mutex write_mutex_;
  std::unique_ptr<MetadataLog> log_;
  std::atomic<std::shared_ptr<const MetadataImage>> image_;
  std::unique_ptr<ProducerIdManager> producer_ids_;
};

// Checks topic-level overrides: known names and valid values. Returns INVALID_CONFIG with a
// message naming the first bad entry, or none. Normalises values in place.
std::pair<protocol::ErrorCode, std::string> validate_topic_configs(std::map<std::string, std::string>& configs);

}  // namespace brokerd::cluster
