#pragma once
// The replay of each KRaft metadata record into a MetadataImage, one overload per record
// type, each defined in its domain's file; metadata_records.cc decodes a frame and hands it
// here. Replays never throw for a record whose references are gone (a partition of a deleted
// topic, a broker of another epoch): they leave the image as it is.
#include <memory>
#include <string>

#include "brokerd/metadata/metadata_image.h"
#include "brokerd/protocol/messages/topic_record.h"
#include "brokerd/protocol/messages/partition_record.h"
#include "brokerd/protocol/messages/partition_change_record.h"
#include "brokerd/protocol/messages/config_record.h"
#include "brokerd/protocol/messages/remove_topic_record.h"
#include "brokerd/protocol/messages/topic_owner_record.h"
#include "brokerd/protocol/messages/register_broker_record.h"
#include "brokerd/protocol/messages/unregister_broker_record.h"
#include "brokerd/protocol/messages/fence_broker_record.h"
#include "brokerd/protocol/messages/unfence_broker_record.h"
#include "brokerd/protocol/messages/producer_ids_record.h"
#include "brokerd/protocol/messages/access_control_entry_record.h"
#include "brokerd/protocol/messages/remove_access_control_entry_record.h"
#include "brokerd/protocol/messages/user_scram_credential_record.h"
#include "brokerd/protocol/messages/remove_user_scram_credential_record.h"
#include "brokerd/protocol/messages/client_quota_record.h"
#include "brokerd/protocol/messages/feature_level_record.h"
#include "brokerd/protocol/messages/tenant_limit_record.h"
#include "brokerd/protocol/messages/mirror_link_record.h"
#include "brokerd/protocol/messages/remove_mirror_link_record.h"
#include "brokerd/protocol/messages/mirror_topic_record.h"

namespace brokerd::metadata {

// Topics, their partitions and configs, and dynamic broker configs (topic_changes.cc).
void replay(const protocol::TopicRecord& r, MetadataImage& image);
void replay(const protocol::PartitionRecord& r, MetadataImage& image);
void replay(const protocol::PartitionChangeRecord& r, MetadataImage& image);
void replay(const protocol::ConfigRecord& r, MetadataImage& image);
void replay(const protocol::RemoveTopicRecord& r, MetadataImage& image);
void replay(const protocol::TopicOwnerRecord& r, MetadataImage& image);

// Broker registrations and producer id blocks (broker_changes.cc).
void replay(const protocol::RegisterBrokerRecord& r, MetadataImage& image);
void replay(const protocol::UnregisterBrokerRecord& r, MetadataImage& image);
void replay(const protocol::FenceBrokerRecord& r, MetadataImage& image);
void replay(const protocol::UnfenceBrokerRecord& r, MetadataImage& image);
void replay(const protocol::ProducerIdsRecord& r, MetadataImage& image);
// Feature levels (features.cc).
void replay(const protocol::FeatureLevelRecord& r, MetadataImage& image);

// ACL bindings (acl_changes.cc).
void replay(const protocol::AccessControlEntryRecord& r, MetadataImage& image);
void replay(const protocol::RemoveAccessControlEntryRecord& r, MetadataImage& image);

// SCRAM credentials (scram_credential_changes.cc).
void replay(const protocol::UserScramCredentialRecord& r, MetadataImage& image);
void replay(const protocol::RemoveUserScramCredentialRecord& r, MetadataImage& image);

// Client quotas (client_quota_changes.cc).
void replay(const protocol::ClientQuotaRecord& r, MetadataImage& image);

// Tenant limits (tenant_limit_changes.cc).
void replay(const protocol::TenantLimitRecord& r, MetadataImage& image);

// Mirror links and mirror topics (mirror_link_changes.cc).
void replay(const protocol::MirrorLinkRecord& r, MetadataImage& image);
void replay(const protocol::RemoveMirrorLinkRecord& r, MetadataImage& image);
void replay(const protocol::MirrorTopicRecord& r, MetadataImage& image);

// Shared by the replays: a topic to change (a copy, put back with MetadataImage::put_topic),
// or nullptr when the image has no topic of that id.
inline std::shared_ptr<TopicMetadata> copy_topic(const MetadataImage& image, const protocol::Uuid& id) {
  const TopicMetadata* t = image.topic(id);
  return t ? std::make_shared<TopicMetadata>(*t) : nullptr;
}

// A part of the image shared between images (credentials, quotas, tenant limits), to
// change: copied once per image being built (the image remembers that it owns its copy), so
// replaying a snapshot of many entries stays linear.
template <typename T>
 T& writable(std::shared_ptr<const T>& shared, MetadataImage::NotCopied& owned) {
  if (!owned) {
    shared = std::make_shared<T>(*shared);
    owned = true;
  }
  return const_cast<T&>(*shared);
}

// One key of one entity's key -> value map set, or removed (the entity goes with its last key).
template <typename Map, typename Key, typename Value>
void set_or_remove(Map& map, const Key& entity, const std::string& key, Value value, bool remove) {
  if (!remove) {
    map[entity][key] = value;
  } else if (auto it = map.find(entity); it != map.end()) {
    it->second.erase(key);
    if (it->second.empty()) map.erase(it);
  }
}

}  // namespace brokerd::metadata
