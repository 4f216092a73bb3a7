// The replay of topic records: topics, their partitions, their configs and owner, and the
// dynamic broker configs that ConfigRecord also carries.
#include <algorithm>

#include "brokerd/config/dynamic_configs.h"
#include "metadata/metadata_records.h"
#include "metadata/record_replay.h"

namespace brokerd::metadata {
void replay(const protocol::TopicRecord& r, MetadataImage& image) {
  auto t = std::make_shared<TopicMetadata>();
  t->name = r.name;
  t->id = r.topic_id;
  t->internal = is_internal_topic(r.name);
  image.put_topic(std::move(t));
}

void replay(const protocol::PartitionRecord& r, MetadataImage& image) {
  auto t = copy_topic(image, r.topic_id);
  if (!t || r.partition_id < 0) return;
  if (t->partition_count() <= r.partition_id) t->partitions.resize(static_cast<size_t>(r.partition_id) + 1);
  auto& a = t->partitions[static_cast<size_t>(r.partition_id)];
  a.replicas = r.replicas;
  a.isr = r.isr;
  a.leader = r.leader;
  a.leader_epoch = std::max(r.leader_epoch, 0);
  a.partition_epoch = std::max(r.partition_epoch, 0);
  a.elr = r.eligible_leader_replicas.value_or(std::vector<int32_t>{});
  a.adding = r.adding_replicas;
  a.removing = r.removing_replicas;
  image.put_topic(std::move(t));
}

void replay(const protocol::PartitionChangeRecord& r, MetadataImage& image) {
  auto t = copy_topic(image, r.topic_id);
  if (!t || r.partition_id < 0 || r.partition_id >= t->partition_count()) return;
  auto& a = t->partitions[static_cast<size_t>(r.partition_id)];
  if (r.isr) a.isr = *r.isr;
  if (r.replicas) a.replicas = *r.replicas;
  if (r.eligible_leader_replicas) a.elr = *r.eligible_leader_replicas;
  if (r.adding_replicas) a.adding = *r.adding_replicas;
  if (r.removing_replicas) a.removing = *r.removing_replicas;
  if (r.leader != -2) {
    a.leader = r.leader;
    ++a.leader_epoch;
  }
  ++a.partition_epoch;
  image.put_topic(std::move(t));
}

void replay(const protocol::ConfigRecord& r, MetadataImage& image) {
  if (r.resource_type == kBrokerResource) {
    auto configs = std::make_shared<config::DynamicConfigs>(*image.broker_configs);
    auto& layer = (*configs)[r.resource_name];
    if (r.value) {
      layer[r.name] = *r.value;
    } else {
      layer.erase(r.name);
      if (layer.empty()) configs->erase(r.resource_name);
    }
    image.broker_configs = std::move(configs);
    return;
  }
  if (r.resource_type != kTopicResource) return;
  const TopicMetadata* existing = image.topic(r.resource_name);
  if (!existing) return;
  auto t = std::make_shared<TopicMetadata>(*existing);
  if (r.value) {
    t->configs[r.name] = *r.value;
  } else {
    t->configs.erase(r.name);
  }
  image.put_topic(std::move(t));
}

void replay(const protocol::RemoveTopicRecord& r, MetadataImage& image) {
  if (const TopicMetadata* t = image.topic(r.topic_id)) image.remove_topic(t->name);
}

void replay(const protocol::TopicOwnerRecord& r, MetadataImage& image) {
  auto t = copy_topic(image, r.topic_id);
  if (!t) return;
  t->owner = r.principal;
  image.put_topic(std::move(t));
}

}  // namespace brokerd::metadata
