#include "brokerd/cluster/metadata_store.h"

#include <fmt/format.h>

#include "brokerd/common/logger.h"
#include "cluster/metadata_log.h"

namespace brokerd::cluster {
namespace {

using protocol::ErrorCode;

TopicChange failure(ErrorCode e, std::string message) {
  TopicChange c;
  c.error = e;
  c.message = std::move(message);
  return c;
}

constexpr int32_t kMaxPartitions = 100000;

}  // namespace

MetadataStore::MetadataStore(std::filesystem::path metadata_dir, std::string cluster_id, BrokerInfo self)
    : log_(std::make_unique<MetadataLog>(std::move(metadata_dir))) {
  auto image = std::make_shared<MetadataImage>();
  image->cluster_id = std::move(cluster_id);
  image->controller_id = self.node_id;
  image->brokers.push_back(std::move(self));
  log_->replay(*image);
  module_logger("cluster")->info("metadata replayed: {} topics, last offset {}", image->topics().size(), image->offset);
  int32_t node_id = image->controller_id;  // this node
  image_.store(std::move(image));
  producer_ids_ = std::make_unique<ProducerIdManager>([this, node_id] { return allocate_producer_ids(node_id, -1); });
}

MetadataStore::~MetadataStore() = default;

void MetadataStore::publish(std::shared_ptr<MetadataImage> next) { image_.store(std::move(next)); }

void MetadataStore::close() {
  std::lock_guard lock(write_mutex_);
  log_->close();
}

TopicChange MetadataStore::create_topic(const std::string& name, int32_t partitions, int32_t replication_factor,
                                        const std::map<std::string, std::string>& configs, bool validate_only) {
  if (!valid_topic_name(name))
    return failure(ErrorCode::invalid_topic_exception,
                   fmt::format("Topic name '{}' is illegal: use 1-249 of [a-zA-Z0-9._-], not '.' or '..'", name));
  if (partitions < 1 || partitions > kMaxPartitions)
    return failure(ErrorCode::invalid_partitions, fmt::format("Number of partitions must be between 1 and {}.", kMaxPartitions));
  auto current = image();
  if (replication_factor < 1)
    return failure(ErrorCode::invalid_replication_factor, "Replication factor must be larger than 0.");
  if (replication_factor > static_cast<int32_t>(current->brokers.size()))
    return failure(ErrorCode::invalid_replication_factor,
                   fmt::format("Replication factor: {} larger than available brokers: {}.", replication_factor,
                               current->brokers.size()));
  auto overrides = configs;
  if (auto [err, msg] = validate_topic_configs(overrides); err != ErrorCode::none) return failure(err, msg);

  std::lock_guard lock(write_mutex_);
  current = image();
  if (current->topic(name)) return failure(ErrorCode::topic_already_exists, fmt::format("Topic '{}' already exists.", name));
  auto topic = std::make_shared<TopicMetadata>();
  topic->name = name;
  topic->id = protocol::Uuid::random();
  topic->partitions = partitions;
  topic->replication_factor = replication_factor;
  topic->configs = std::move(overrides);
  topic->internal = is_internal_topic(name);
  if (validate_only) return TopicChange{ErrorCode::none, {}, topic, nullptr};

  std::vector<Bytes> records{topic_record(*topic)};
  for (int32_t p = 0; p < partitions; ++p) records.push_back(partition_record(*topic, p, current->controller_id));
  for (const auto& [k, v] : topic->configs) records.push_back(config_record(name, k, v));
  auto next = std::make_shared<MetadataImage>(*current);
  next->offset = log_->append(records);
  next->put_topic(topic);
  publish(next);
  module_logger("cluster")->info("created topic {} ({} partitions, id {})", name, partitions, topic->id.to_string());
  return TopicChange{ErrorCode::none, {}, topic, next};
}

TopicChange MetadataStore::delete_topic(const std::string& name) {
  std::lock_guard lock(write_mutex_);
  auto current = image();
  const TopicMetadata* t = current->topic(name);
  if (!t) return failure(ErrorCode::unknown_topic_or_partition, "This server does not host this topic.");
  auto removed = current->topics().at(name);
  auto next = std::make_shared<MetadataImage>(*current);
  next->offset = log_->append({remove_topic_record(t->id)});
  next->remove_topic(name);
  publish(next);
  module_logger("cluster")->info("deleted topic {}", name);
  return TopicChange{ErrorCode::none, {}, removed, next};
}

TopicChange MetadataStore::create_partitions(const std::string& name, int32_t total, bool validate_only) {
  std::lock_guard lock(write_mutex_);
  auto current = image();
  const TopicMetadata* t = current->topic(name);
  if (!t) return failure(ErrorCode::unknown_topic_or_partition, "This server does not host this topic.");
  if (total <= t->partitions)
    return failure(ErrorCode::invalid_partitions,
                   fmt::format("Topic currently has {} partitions, which is higher than the requested {}.", t->partitions, total));
  if (total > kMaxPartitions)
    return failure(ErrorCode::invalid_partitions, fmt::format("Number of partitions must be at most {}.", kMaxPartitions));
  auto topic = std::make_shared<TopicMetadata>(*t);
  topic->partitions = total;
  if (validate_only) return TopicChange{ErrorCode::none, {}, topic, nullptr};
  std::vector<Bytes> records;
  for (int32_t p = t->partitions; p < total; ++p) records.push_back(partition_record(*topic, p, current->controller_id));
  auto next = std::make_shared<MetadataImage>(*current);
  next->offset = log_->append(records);
  next->put_topic(topic);
  publish(next);
  return TopicChange{ErrorCode::none, {}, topic, next};
}

ProducerIdBlock MetadataStore::allocate_producer_ids(int32_t broker_id, int64_t broker_epoch) {
  std::lock_guard lock(write_mutex_);
  auto current = image();
  ProducerIdBlock block{broker_id, current->next_producer_id, ProducerIdManager::kBlockSize};
  auto next = std::make_shared<MetadataImage>(*current);
  next->offset = log_->append({producer_ids_record(broker_id, broker_epoch, block.end())});
  next->next_producer_id = block.end();
  publish(next);
  module_logger("cluster")->info("allocated producer ids [{}, {}) to node {}", block.first, block.end(), broker_id);
  return block;
}

TopicChange MetadataStore::set_topic_configs(const std::string& name, const std::map<std::string, std::string>& configs,
                                             bool validate_only) {
  auto overrides = configs;
  if (auto [err, msg] = validate_topic_configs(overrides); err != ErrorCode::none) return failure(err, msg);
  std::lock_guard lock(write_mutex_);
  auto current = image();
  const TopicMetadata* t = current->topic(name);
  if (!t) return failure(ErrorCode::unknown_topic_or_partition, "This server does not host this topic.");
  auto topic = std::make_shared<TopicMetadata>(*t);
  topic->configs = overrides;
  if (validate_only) return TopicChange{ErrorCode::none, {}, topic, nullptr};
  std::vector<Bytes> records;
  for (const auto& [k, v] : t->configs)
    if (!overrides.contains(k)) records.push_back(config_record(name, k, std::nullopt));
  for (const auto& [k, v] : overrides) {
    auto old = t->configs.find(k);
    if (old == t->configs.end() || old->second != v) records.push_back(config_record(name, k, v));
  }
  if (records.empty()) return TopicChange{ErrorCode::none, {}, topic, current};
  auto next = std::make_shared<MetadataImage>(*current);
  next->offset = log_->append(records);
  next->put_topic(topic);
  publish(next);
  return TopicChange{ErrorCode::none, {}, topic, next};
}

}  // namespace brokerd::cluster
