#include "brokerd/common/byte_text.h"
#include "metadata/metadata_records.h"

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
#include "brokerd/protocol/messages/tenant_limit_record.h"
#include "brokerd/protocol/messages/topic_owner_record.h"
#include "brokerd/protocol/messages/topic_record.h"
#include "brokerd/protocol/wire.h"

namespace brokerd::metadata {
namespace {

constexpr uint32_t kFrameVersion = 1;
constexpr uint32_t kTopicRecord = 2, kPartitionRecord = 3, kConfigRecord = 4, kPartitionChangeRecord = 5,
                   kRemoveTopicRecord = 9;
constexpr uint32_t kProducerIdsRecord = 15;
constexpr uint32_t kUserScramCredentialRecord = 11, kRemoveUserScramCredentialRecord = 22;
constexpr uint32_t kClientQuotaRecord = 14;
constexpr uint32_t kAccessControlEntryRecord = 18, kRemoveAccessControlEntryRecord = 19;
constexpr uint32_t kRegisterBrokerRecord = 0, kUnregisterBrokerRecord = 1, kFenceBrokerRecord = 7,
                   kUnfenceBrokerRecord = 8;
// brokerd's own records (proto/brokerd), in a range Kafka does not use.
constexpr uint32_t kMirrorLinkRecord = 30000, kRemoveMirrorLinkRecord = 30001, kMirrorTopicRecord = 30002,
                   kTenantLimitRecord = 30003, kTopicOwnerRecord = 30004;
constexpr int8_t kTopicResource = 2, kBrokerResource = 4;

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

std::shared_ptr<TopicMetadata> copy_topic(const MetadataImage& image, const protocol::Uuid& id) {
  const TopicMetadata* t = image.topic(id);
  return t ? std::make_shared<TopicMetadata>(*t) : nullptr;
}

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

void put_broker(MetadataImage& image, BrokerInfo b) {
  for (auto& existing : image.brokers) {
    if (existing.node_id == b.node_id) {
      existing = std::move(b);
      return;
    }
  }
  image.brokers.push_back(std::move(b));
  std::sort(image.brokers.begin(), image.brokers.end(),
            [](const BrokerInfo& x, const BrokerInfo& y) { return x.node_id < y.node_id; });
}

void set_fenced(MetadataImage& image, int32_t id, int64_t epoch, bool fenced) {
  for (auto& b : image.brokers)
    if (b.node_id == id && b.epoch == epoch) b.fenced = fenced;
}

// Applies the frame at the reader's position and leaves the reader after it.
// The image's ACLs, to change: a published image's set is shared and indexed, so the first
// change of a batch copies it and leaves the index stale (null) until MetadataImage::seal();
// later changes of the same batch find that private copy and change it in place.
AclSet& writable_acls(MetadataImage& image) {
  if (image.acls->index) image.acls = std::make_shared<AclSet>(AclSet{image.acls->bindings, nullptr});
  return const_cast<AclSet&>(*image.acls);
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

ScramCredentials& writable_credentials(MetadataImage& image) {
  return writable(image.scram_credentials, image.owns_scram_credentials);
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

void apply_record(protocol::Reader& rd, MetadataImage& image) {
  rd.uvarint();  // frame version
  uint32_t type = rd.uvarint();
  auto version = static_cast<int16_t>(rd.uvarint());
  switch (type) {
    case kTopicRecord: {
      protocol::TopicRecord r;
      r.decode(rd, version);
      auto t = std::make_shared<TopicMetadata>();
      t->name = r.name;
      t->id = r.topic_id;
      t->internal = is_internal_topic(r.name);
      image.put_topic(std::move(t));
      break;
    }
    case kPartitionRecord: {
      protocol::PartitionRecord r;
      r.decode(rd, version);
      auto t = copy_topic(image, r.topic_id);
      if (!t || r.partition_id < 0) break;
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
      break;
    }
    case kPartitionChangeRecord: {
      protocol::PartitionChangeRecord r;
      r.decode(rd, version);
      auto t = copy_topic(image, r.topic_id);
      if (!t || r.partition_id < 0 || r.partition_id >= t->partition_count()) break;
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
      break;
    }
    case kConfigRecord: {
      protocol::ConfigRecord r;
      r.decode(rd, version);
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
        break;
      }
      if (r.resource_type != kTopicResource) break;
      const TopicMetadata* existing = image.topic(r.resource_name);
      if (!existing) break;
      auto t = std::make_shared<TopicMetadata>(*existing);
      if (r.value) {
        t->configs[r.name] = *r.value;
      } else {
        t->configs.erase(r.name);
      }
      image.put_topic(std::move(t));
      break;
    }
    case kRemoveTopicRecord: {
      protocol::RemoveTopicRecord r;
      r.decode(rd, version);
      if (const TopicMetadata* t = image.topic(r.topic_id)) image.remove_topic(t->name);
      break;
    }
    case kRegisterBrokerRecord: {
      protocol::RegisterBrokerRecord r;
      r.decode(rd, version);
      BrokerInfo b;
      b.node_id = r.broker_id;
      b.incarnation = r.incarnation_id;
      b.epoch = r.broker_epoch;
      if (!r.end_points.empty()) {
        b.listener = r.end_points[0].name;
        b.host = r.end_points[0].host;
        b.port = r.end_points[0].port;
      }
      for (const auto& e : r.end_points) b.endpoints.push_back(BrokerEndpoint{e.name, e.host, e.port, e.security_protocol});
      b.rack = r.rack.value_or("");
      b.fenced = r.fenced;
      put_broker(image, std::move(b));
      break;
    }
    case kUnregisterBrokerRecord: {
      protocol::UnregisterBrokerRecord r;
      r.decode(rd, version);
      std::erase_if(image.brokers, [&](const BrokerInfo& b) { return b.node_id == r.broker_id && b.epoch == r.broker_epoch; });
      break;
    }
    case kFenceBrokerRecord: {
      protocol::FenceBrokerRecord r;
      r.decode(rd, version);
      set_fenced(image, r.id, r.epoch, true);
      break;
    }
    case kUnfenceBrokerRecord: {
      protocol::UnfenceBrokerRecord r;
      r.decode(rd, version);
      set_fenced(image, r.id, r.epoch, false);
      break;
    }
    case kProducerIdsRecord: {
      protocol::ProducerIdsRecord r;
      r.decode(rd, version);
      image.next_producer_id = std::max(image.next_producer_id, r.next_producer_id);
      break;
    }
    case kAccessControlEntryRecord: {
      protocol::AccessControlEntryRecord r;
      r.decode(rd, version);
      acl::Binding b = acl::binding_of(r.id, r.resource_type, r.resource_name, r.pattern_type, r.principal, r.host,
                                       r.operation, r.permission_type);
      if (acl::invalid_binding(b)) break;  // codes this release does not know
      writable_acls(image).bindings[r.id] = std::move(b);
      break;
    }
    case kRemoveAccessControlEntryRecord: {
      protocol::RemoveAccessControlEntryRecord r;
      r.decode(rd, version);
      writable_acls(image).bindings.erase(r.id);
      break;
    }
    case kUserScramCredentialRecord: {
      protocol::UserScramCredentialRecord r;
      r.decode(rd, version);
      auto mechanism = auth::scram_mechanism(r.mechanism);
      if (!mechanism) break;  // a mechanism this release does not know
      writable_credentials(image)[r.name][*mechanism] =
          auth::ScramCredential{*mechanism, text_of(r.salt), text_of(r.stored_key), text_of(r.server_key), r.iterations};
      break;
    }
    case kRemoveUserScramCredentialRecord: {
      protocol::RemoveUserScramCredentialRecord r;
      r.decode(rd, version);
      auto mechanism = auth::scram_mechanism(r.mechanism);
      if (!mechanism) break;
      auto& credentials = writable_credentials(image);
      if (auto it = credentials.find(r.name); it != credentials.end()) {
        it->second.erase(*mechanism);
        if (it->second.empty()) credentials.erase(it);
      }
      break;
    }
    case kClientQuotaRecord: {
      protocol::ClientQuotaRecord r;
      r.decode(rd, version);
      const quota::Entity entity = quota::normalized(quota::entity_of(r.entity));
      set_or_remove(writable(image.client_quotas, image.owns_client_quotas), entity, r.key, r.value, r.remove);
      break;
    }
    case kMirrorLinkRecord: {
      protocol::MirrorLinkRecord r;
      r.decode(rd, version);
      MirrorLink l;
      l.name = r.name;
      l.id = r.link_id;
      l.source_bootstrap = r.source_bootstrap_servers;
      for (const auto& c : r.source_configs) l.source_configs[c.name] = c.value;
      l.topics = r.topics;
      l.topic_prefixes = r.topic_prefixes;
      l.exclude_topics = r.exclude_topics;
      l.groups = r.groups;
      l.group_prefixes = r.group_prefixes;
      l.all_groups = r.all_groups;
      l.sync_configs = r.sync_configs;
      l.sync_acls = r.sync_acls;
      l.paused = r.paused;
      image.links[l.name] = std::move(l);
      break;
    }
    case kRemoveMirrorLinkRecord: {
      protocol::RemoveMirrorLinkRecord r;
      r.decode(rd, version);
      image.links.erase(r.name);
      break;
    }
    case kMirrorTopicRecord: {
      protocol::MirrorTopicRecord r;
      r.decode(rd, version);
      auto t = copy_topic(image, r.topic_id);
      if (!t) break;
      t->mirror_link = r.link_name.value_or("");
      t->source_topic_id = r.source_topic_id;
      image.put_topic(std::move(t));
      break;
    }
    case kTenantLimitRecord: {
      protocol::TenantLimitRecord r;
      r.decode(rd, version);
      const tenant::Pattern pattern{r.principal, r.pattern_type};
      set_or_remove(writable(image.tenant_limits, image.owns_tenant_limits), pattern, r.key, r.value, r.remove);
      break;
    }
    case kTopicOwnerRecord: {
      protocol::TopicOwnerRecord r;
      r.decode(rd, version);
      auto t = copy_topic(image, r.topic_id);
      if (!t) break;
      t->owner = r.principal;
      image.put_topic(std::move(t));
      break;
    }
    default:
      break;
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
