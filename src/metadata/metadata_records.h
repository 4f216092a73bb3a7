#pragma once
// KRaft metadata records (TopicRecord, PartitionRecord, PartitionChangeRecord, ConfigRecord,
// RemoveTopicRecord, ProducerIdsRecord, FeatureLevelRecord, broker registrations, ACLs, SCRAM credentials, client
// quotas) and brokerd's own (mirror links, tenant limits, topic owners), framed as KRaft
// frames them; apply_change() hands each record to its domain's replay (record_replay.h).
// One change of the metadata is one entry of the metadata quorum's log: a single frame, or
// several behind a 0 byte (a frame never starts with 0: its first field is the frame version,
// 1), each with its length, so that a change applies whole or not at all.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "brokerd/metadata/metadata_image.h"
#include "brokerd/metadata/partition_election.h"
#include "brokerd/common/bytes.h"

namespace brokerd::metadata {

// ConfigRecord's resource types.
constexpr int8_t kTopicResource = 2, kBrokerResource = 4;

// Encoders of the records a change writes.
Bytes topic_record(const TopicMetadata& t);
Bytes partition_record(const protocol::Uuid& topic_id, int32_t partition, const PartitionAssignment& a);
Bytes partition_change_record(const protocol::Uuid& topic_id, int32_t partition, const PartitionChange& change);
Bytes config_record(const std::string& topic, const std::string& name, const std::optional<std::string>& value);
// A dynamic broker config: `resource` is a broker id, or "" for the cluster-wide default.
Bytes broker_config_record(const std::string& resource, const std::string& name, const std::optional<std::string>& value);
Bytes remove_topic_record(const protocol::Uuid& id);
Bytes producer_ids_record(int32_t broker_id, int64_t broker_epoch, int64_t next_producer_id);
Bytes feature_level_record(const std::string& name, int16_t level);
Bytes register_broker_record(const BrokerInfo& b);
Bytes fence_broker_record(int32_t id, int64_t epoch, bool fenced);  // FenceBrokerRecord / UnfenceBrokerRecord
// brokerd's own: a mirror link (whole, as created or changed), its removal, and a topic's
// mirror marking (its link, empty once promoted, and its source topic id).
Bytes mirror_link_record(const MirrorLink& link);
Bytes remove_mirror_link_record(const std::string& name);
Bytes mirror_topic_record(const TopicMetadata& topic);
// A user's SCRAM credential for one mechanism (KIP-554), and its removal.
Bytes scram_credential_record(const std::string& user, const auth::ScramCredential& c);
Bytes remove_scram_credential_record(const std::string& user, auth::ScramMechanism m);
// One quota of one entity, set (value) or removed.
Bytes client_quota_record(const quota::Entity& entity, const std::string& key, double value, bool remove);
// One tenant limit of one pattern, set or removed, and the principal that created a topic.
Bytes tenant_limit_record(const tenant::Pattern& pattern, const std::string& key, int64_t value, bool remove);
Bytes topic_owner_record(const TopicMetadata& t);
// An ACL binding (AccessControlEntryRecord) and its removal by id.
Bytes acl_record(const acl::Binding& b);
Bytes remove_acl_record(const protocol::Uuid& id);

// One PartitionChangeRecord per update, appended to `records`.
inline void add_change_records(std::vector<Bytes>& records, const std::vector<PartitionUpdate>& updates) {
  for (const auto& u : updates) records.push_back(partition_change_record(u.topic_id, u.partition, u.change));
}

// The whole image as records (a snapshot): replaying them into an empty image restores it.
std::vector<Bytes> image_records(const MetadataImage& image);

// One change as an entry payload, and its replay (a payload written by an older release
// holds one frame). Unknown record types are skipped, so a newer log can be read by an older
// node as far as it understands it. Throws protocol::DecodeError on a malformed payload.
std::string encode_change(const std::vector<Bytes>& records);
void apply_change(std::span<const std::byte> payload, MetadataImage& image);

}  // namespace brokerd::metadata
