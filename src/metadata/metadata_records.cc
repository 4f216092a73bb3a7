#include "brokerd/common/byte_text.h"
#include "metadata/metadata_records.h"
#include "metadata/record_replay.h"

#include <algorithm>
#include <cstring>

#include "brokerd/protocol/messages/access_control_entry_record.h"
#include "brokerd/protocol/messages/config_record.h"
#include "brokerd/protocol/messages/remove_access_control_entry_record.h"
#include "brokerd/protocol/messages/fence_broker_record.h"
#include "brokerd/protocol/messages/mirror_link_record.h"
#include "brokerd/protocol/messages/mirror_topic_record.h"
#include "brokerd/protocol/messages/remove_mirror_link_record.h"
#include "brokerd/protocol/messages/remove_user_scram_credential_record.h"
#include "brokerd/protocol/messages/user_scram_credential_record.h"
#include "brokerd/protocol/messages/client_quota_record.h"
#include "brokerd/protocol/messages/register_broker_record.h"
#include "brokerd/protocol/messages/unfence_broker_record.h"
#include "brokerd/protocol/messages/unregister_broker_record.h"
#include "brokerd/protocol/messages/partition_change_record.h"
#include "brokerd/protocol/messages/partition_record.h"
#include "brokerd/protocol/messages/producer_ids_record.h"
#include "brokerd/protocol/messages/remove_topic_record.h"
#include "brokerd/protocol/messages/feature_level_record.h"
#include "brokerd/protocol/messages/tenant_limit_record.h"
#include "brokerd/protocol/messages/topic_owner_record.h"
#include "brokerd/protocol/messages/topic_record.h"
#include "brokerd/protocol/wire.h"

namespace brokerd::metadata {
namespace {

constexpr uint32_t kFrameVersion = 1;
constexpr uint32_t kTopicRecord = 2, kPartitionRecord = 3, kConfigRecord = 4, kPartitionChangeRecord = 5,
                   kRemoveTopicRecord = 9;
constexpr uint32_t kProducerIdsRecord = 15, kFeatureLevelRecord = 12;
constexpr uint32_t kUserScramCredentialRecord = 11, kRemoveUserScramCredentialRecord = 22;
constexpr uint32_t kClientQuotaRecord = 14;
constexpr uint32_t kAccessControlEntryRecord = 18, kRemoveAccessControlEntryRecord = 19;
constexpr uint32_t kRegisterBrokerRecord = 0, kUnregisterBrokerRecord = 1, kFenceBrokerRecord = 7,
                   kUnfenceBrokerRecord = 8;
// brokerd's own records (proto/brokerd), in a range Kafka does not use.
constexpr uint32_t kMirrorLinkRecord = 30000, kRemoveMirrorLinkRecord = 30001, kMirrorTopicRecord = 30002,
                   kTenantLimitRecord = 30003, kTopicOwnerRecord = 30004;

template <typename Msg>
Bytes frame(uint32_t type, const Msg& msg, int16_t version = 0) {
  protocol::Writer w;
  w.uvarint(kFrameVersion);
  w.uvarint(type);
  w.uvarint(static_cast<uint32_t>(version));
  msg.encode(w, version);
  return std::move(w).finish_bytes();
}

// Partition records carry the eligible leader replicas (KIP-966) from version 2 on.
constexpr int16_t kPartitionRecordVersion = 2;

}  // namespace

Bytes topic_record(const TopicMetadata& t) {
  protocol::TopicRecord r;
  r.name = t.name;
  r.topic_id = t.id;
  return frame(kTopicRecord, r);
}

Bytes partition_record(const protocol::Uuid& topic_id, int32_t partition, const PartitionAssignment& a) {
  protocol::PartitionRecord r;
  r.partition_id = partition;
  r.topic_id = topic_id;
  r.replicas = a.replicas;
  r.isr = a.isr;
  r.leader = a.leader;
  r.leader_epoch = a.leader_epoch;
  r.partition_epoch = a.partition_epoch;
  if (!a.elr.empty()) r.eligible_leader_replicas = a.elr;
  r.adding_replicas = a.adding;
  r.removing_replicas = a.removing;
  return frame(kPartitionRecord, r, kPartitionRecordVersion);
}

Bytes partition_change_record(const protocol::Uuid& topic_id, int32_t partition, const PartitionChange& change) {
  protocol::PartitionChangeRecord r;
  r.partition_id = partition;
  r.topic_id = topic_id;
  r.isr = change.isr;
  if (change.leader) r.leader = *change.leader;
  r.replicas = change.replicas;
  r.eligible_leader_replicas = change.elr;
  r.adding_replicas = change.adding;
  r.removing_replicas = change.removing;
  return frame(kPartitionChangeRecord, r, kPartitionRecordVersion);
}

static Bytes any_config_record(int8_t type, const std::string& resource, const std::string& name,
                               const std::optional<std::string>& value) {
  protocol::ConfigRecord r;
  r.resource_type = type;
  r.resource_name = resource;
  r.name = name;
  r.value = value;
  return frame(kConfigRecord, r);
}

Bytes config_record(const std::string& topic, const std::string& name, const std::optional<std::string>& value) {
  return any_config_record(kTopicResource, topic, name, value);
}

Bytes broker_config_record(const std::string& resource, const std::string& name, const std::optional<std::string>& value) {
  return any_config_record(kBrokerResource, resource, name, value);
}

Bytes remove_topic_record(const protocol::Uuid& id) {
  protocol::RemoveTopicRecord r;
  r.topic_id = id;
  return frame(kRemoveTopicRecord, r);
}

Bytes feature_level_record(const std::string& name, int16_t level) {
  protocol::FeatureLevelRecord r;
  r.name = name;
  r.feature_level = level;
  return frame(kFeatureLevelRecord, r);
}

Bytes producer_ids_record(int32_t broker_id, int64_t broker_epoch, int64_t next_producer_id) {
  protocol::ProducerIdsRecord r;
  r.broker_id = broker_id;
  r.broker_epoch = broker_epoch;
  r.next_producer_id = next_producer_id;
  return frame(kProducerIdsRecord, r);
}

Bytes register_broker_record(const BrokerInfo& b) {
  protocol::RegisterBrokerRecord r;
  r.broker_id = b.node_id;
  r.incarnation_id = b.incarnation;
  r.broker_epoch = b.epoch;
  // The advertised (inter-broker) listener first. By name, not through a reference into
  // end_points: adding the others may move it.
  const std::string first = b.listener.empty() ? "PLAINTEXT" : b.listener;
  auto& ep = r.end_points.emplace_back();
  ep.name = first;
  ep.host = b.host;
  ep.port = static_cast<uint16_t>(b.port);
  ep.security_protocol = 0;  // PLAINTEXT, unless the endpoints say otherwise
  for (const auto& e : b.endpoints)
    if (e.listener == first) ep.security_protocol = e.security_protocol;
  for (const auto& e : b.endpoints) {
    if (e.listener == first) continue;
    auto& other = r.end_points.emplace_back();
    other.name = e.listener;
    other.host = e.host;
    other.port = static_cast<uint16_t>(e.port);
    other.security_protocol = e.security_protocol;
  }
  r.rack = b.rack.empty() ? std::nullopt : std::optional<std::string>(b.rack);
  r.fenced = b.fenced;
  return frame(kRegisterBrokerRecord, r);
}

Bytes fence_broker_record(int32_t id, int64_t epoch, bool fenced) {
  if (fenced) {
    protocol::FenceBrokerRecord r;
    r.id = id;
    r.epoch = epoch;
    return frame(kFenceBrokerRecord, r);
  }
  protocol::UnfenceBrokerRecord r;
  r.id = id;
  r.epoch = epoch;
  return frame(kUnfenceBrokerRecord, r);
}

Bytes mirror_link_record(const MirrorLink& l) {
  protocol::MirrorLinkRecord r;
  r.name = l.name;
  r.link_id = l.id;
  r.source_bootstrap_servers = l.source_bootstrap;
  for (const auto& [k, v] : l.source_configs) {
    auto& c = r.source_configs.emplace_back();
    c.name = k;
    c.value = v;
  }
  r.topics = l.topics;
  r.topic_prefixes = l.topic_prefixes;
  r.exclude_topics = l.exclude_topics;
  r.groups = l.groups;
  r.group_prefixes = l.group_prefixes;
  r.all_groups = l.all_groups;
  r.sync_configs = l.sync_configs;
  r.paused = l.paused;
  r.sync_acls = l.sync_acls;
  return frame(kMirrorLinkRecord, r);
}

Bytes scram_credential_record(const std::string& user, const auth::ScramCredential& c) {
  protocol::UserScramCredentialRecord r;
  r.name = user;
  r.mechanism = static_cast<int8_t>(c.mechanism);
  r.salt = bytes_of(c.salt);
  r.stored_key = bytes_of(c.stored_key);
  r.server_key = bytes_of(c.server_key);
  r.iterations = c.iterations;
  return frame(kUserScramCredentialRecord, r);
}

Bytes acl_record(const acl::Binding& b) {
  protocol::AccessControlEntryRecord r;
  r.id = b.id;
  r.resource_type = static_cast<int8_t>(b.resource_type);
  r.resource_name = b.resource_name;
  r.pattern_type = static_cast<int8_t>(b.pattern_type);
  r.principal = b.principal;
  r.host = b.host;
  r.operation = static_cast<int8_t>(b.operation);
  r.permission_type = static_cast<int8_t>(b.permission);
  return frame(kAccessControlEntryRecord, r);
}

Bytes remove_acl_record(const protocol::Uuid& id) {
  protocol::RemoveAccessControlEntryRecord r;
  r.id = id;
  return frame(kRemoveAccessControlEntryRecord, r);
}

Bytes client_quota_record(const quota::Entity& entity, const std::string& key, double value, bool remove) {
  protocol::ClientQuotaRecord r;
  quota::put_entity(entity, r.entity);
  r.key = key;
  r.value = value;
  r.remove = remove;
  return frame(kClientQuotaRecord, r);
}

Bytes remove_scram_credential_record(const std::string& user, auth::ScramMechanism m) {
  protocol::RemoveUserScramCredentialRecord r;
  r.name = user;
  r.mechanism = static_cast<int8_t>(m);
  return frame(kRemoveUserScramCredentialRecord, r);
}

Bytes remove_mirror_link_record(const std::string& name) {
  protocol::RemoveMirrorLinkRecord r;
  r.name = name;
  return frame(kRemoveMirrorLinkRecord, r);
}

Bytes mirror_topic_record(const TopicMetadata& t) {
  protocol::MirrorTopicRecord r;
  r.topic_id = t.id;
  if (!t.mirror_link.empty()) r.link_name = t.mirror_link;
  r.source_topic_id = t.source_topic_id;
  return frame(kMirrorTopicRecord, r);
}

Bytes tenant_limit_record(const tenant::Pattern& pattern, const std::string& key, int64_t value, bool remove) {
  protocol::TenantLimitRecord r;
  r.principal = pattern.principal;
  r.pattern_type = pattern.type;
  r.key = key;
  r.value = value;
  r.remove = remove;
  return frame(kTenantLimitRecord, r);
}

Bytes topic_owner_record(const TopicMetadata& t) {
  protocol::TopicOwnerRecord r;
  r.topic_id = t.id;
  r.principal = t.owner;
  return frame(kTopicOwnerRecord, r);
}

namespace {

template <typename Record>
Record decoded(protocol::Reader& rd, int16_t version) {
  Record r;
  r.decode(rd, version);
  return r;
}

// Applies the frame at the reader's position and leaves the reader after it: each record
// type is replayed by its domain (record_replay.h).
void apply_record(protocol::Reader& rd, MetadataImage& image) {
  rd.uvarint();  // frame version
  uint32_t type = rd.uvarint();
  auto version = static_cast<int16_t>(rd.uvarint());
  switch (type) {
    case kTopicRecord: return replay(decoded<protocol::TopicRecord>(rd, version), image);
    case kPartitionRecord: return replay(decoded<protocol::PartitionRecord>(rd, version), image);
    case kPartitionChangeRecord: return replay(decoded<protocol::PartitionChangeRecord>(rd, version), image);
    case kConfigRecord: return replay(decoded<protocol::ConfigRecord>(rd, version), image);
    case kRemoveTopicRecord: return replay(decoded<protocol::RemoveTopicRecord>(rd, version), image);
    case kRegisterBrokerRecord: return replay(decoded<protocol::RegisterBrokerRecord>(rd, version), image);
    case kUnregisterBrokerRecord: return replay(decoded<protocol::UnregisterBrokerRecord>(rd, version), image);
    case kFenceBrokerRecord: return replay(decoded<protocol::FenceBrokerRecord>(rd, version), image);
    case kUnfenceBrokerRecord: return replay(decoded<protocol::UnfenceBrokerRecord>(rd, version), image);
    case kProducerIdsRecord: return replay(decoded<protocol::ProducerIdsRecord>(rd, version), image);
    case kFeatureLevelRecord: return replay(decoded<protocol::FeatureLevelRecord>(rd, version), image);
    case kAccessControlEntryRecord: return replay(decoded<protocol::AccessControlEntryRecord>(rd, version), image);
    case kRemoveAccessControlEntryRecord: return replay(decoded<protocol::RemoveAccessControlEntryRecord>(rd, version), image);
    case kUserScramCredentialRecord: return replay(decoded<protocol::UserScramCredentialRecord>(rd, version), image);
    case kRemoveUserScramCredentialRecord: return replay(decoded<protocol::RemoveUserScramCredentialRecord>(rd, version), image);
    case kClientQuotaRecord: return replay(decoded<protocol::ClientQuotaRecord>(rd, version), image);
    case kMirrorLinkRecord: return replay(decoded<protocol::MirrorLinkRecord>(rd, version), image);
    case kRemoveMirrorLinkRecord: return replay(decoded<protocol::RemoveMirrorLinkRecord>(rd, version), image);
    case kMirrorTopicRecord: return replay(decoded<protocol::MirrorTopicRecord>(rd, version), image);
    case kTenantLimitRecord: return replay(decoded<protocol::TenantLimitRecord>(rd, version), image);
    case kTopicOwnerRecord: return replay(decoded<protocol::TopicOwnerRecord>(rd, version), image);
    default: return;  // a record type this release does not know
  }
}

}  // namespace

std::vector<Bytes> image_records(const MetadataImage& image) {
  std::vector<Bytes> out;
  for (const auto& b : image.brokers) out.push_back(register_broker_record(b));
  image.for_each_topic([&](const TopicPtr& t) {
    out.push_back(topic_record(*t));
    for (int32_t p = 0; p < t->partition_count(); ++p)
      out.push_back(partition_record(t->id, p, t->partitions[static_cast<size_t>(p)]));
    for (const auto& [k, v] : t->configs) out.push_back(config_record(t->name, k, v));
    if (!t->mirror_link.empty() || !t->source_topic_id.is_zero()) out.push_back(mirror_topic_record(*t));
    if (!t->owner.empty()) out.push_back(topic_owner_record(*t));
  });
  for (const auto& [name, link] : image.links) out.push_back(mirror_link_record(link));
  for (const auto& [id, binding] : image.acls->bindings) out.push_back(acl_record(binding));
  for (const auto& [user, by_mechanism] : *image.scram_credentials)
    for (const auto& [mechanism, credential] : by_mechanism) out.push_back(scram_credential_record(user, credential));
  for (const auto& [entity, values] : *image.client_quotas)
    for (const auto& [key, value] : values) out.push_back(client_quota_record(entity, key, value, false));
  for (const auto& [pattern, values] : *image.tenant_limits)
    for (const auto& [key, value] : values) out.push_back(tenant_limit_record(pattern, key, value, false));
  for (const auto& [resource, values] : *image.broker_configs)
    for (const auto& [key, value] : values) out.push_back(broker_config_record(resource, key, value));
  for (const auto& [name, level] : image.features) out.push_back(feature_level_record(name, level));
  if (image.next_producer_id > 0) out.push_back(producer_ids_record(-1, -1, image.next_producer_id));
  return out;
}

std::string encode_change(const std::vector<Bytes>& records) {
  if (records.size() == 1) return std::string(reinterpret_cast<const char*>(records[0].data()), records[0].size());
  protocol::Writer w;
  w.i8(0);
  for (const auto& r : records) {
    w.uvarint(static_cast<uint32_t>(r.size()));
    w.raw(r);
  }
  Bytes b = std::move(w).finish_bytes();
  return text_of(b);
}

void apply_change(std::span<const std::byte> payload, MetadataImage& image) {
  if (payload.empty()) return;
  protocol::Reader rd(payload);
  if (payload[0] != std::byte{0}) {
    apply_record(rd, image);
    return;
  }
  rd.i8();
  while (rd.remaining() > 0) {
    const uint32_t size = rd.uvarint();
    if (size > rd.remaining()) throw protocol::DecodeError("metadata change: a record runs past the entry");
    protocol::Reader one = rd.sub(size);
    apply_record(one, image);
  }
}

}  // namespace brokerd::metadata
