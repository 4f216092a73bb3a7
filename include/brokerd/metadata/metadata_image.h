#pragma once
// An immutable snapshot of the cluster's metadata: brokers, topics with each partition's
// replicas, leader and in-sync replicas, and topic configs. Readers hold a shared_ptr to one
// image; the metadata store publishes a new one per committed change.
//
// Images share structure: topics live in fixed hash buckets of shared, immutable vectors, so
// a change copies the bucket array (pointers) and the one bucket it touches, never every
// topic, and two images are compared bucket by bucket (for_each_changed_topic) in time
// proportional to what changed. With 20,000 topics a change costs microseconds.
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "brokerd/acl/acl.h"
#include "brokerd/acl/authorizer.h"
#include "brokerd/auth/scram.h"
#include "brokerd/quota/client_quotas.h"
#include "brokerd/tenant/tenant_limits.h"
#include "brokerd/metadata/mirror_link.h"
#include "brokerd/config/dynamic_configs.h"
#include "brokerd/protocol/uuid.h"

namespace brokerd::metadata {

// A broker as registered with the controller (RegisterBrokerRecord): where clients reach it,
// its zone, the epoch of its registration, and whether it is fenced (registered but not, or
// no longer, serving: not caught up yet, missed its heartbeats, or shut down).
struct BrokerEndpoint {
  std::string listener;
  std::string host;
  int32_t port = 0;
  int16_t security_protocol = 0;  // SecurityProtocol's code
  bool operator==(const BrokerEndpoint&) const = default;
};

struct BrokerInfo {
  int32_t node_id = 0;
  std::string host;
  int32_t port = 0;
  std::string rack;  // empty = none
  int64_t epoch = -1;
  protocol::Uuid incarnation;
  bool fenced = true;
  std::string listener;  // the name of the endpoint other brokers use (host, port above)
  // Every client listener of the broker; the one above first. Empty in records written
  // before brokers registered several listeners (then host, port and listener are all).
  std::vector<BrokerEndpoint> endpoints;
};

// Where a client that came in on `listener` reaches `b`: the broker's endpoint of that name,
// else the one other brokers use.
BrokerEndpoint endpoint_for(const BrokerInfo& b, std::string_view listener);

// The ACLs (AccessControlEntryRecord), by id, and the index the authorizer reads. The index
// is rebuilt once per published image whose bindings changed.
struct AclSet {
  std::map<protocol::Uuid, acl::Binding> bindings;
  std::shared_ptr<const acl::Index> index;  // null while stale (between a change and publishing)
};

// SCRAM credentials (KIP-554), by user name, then mechanism.
using ScramCredentials = std::map<std::string, std::map<auth::ScramMechanism, auth::ScramCredential>>;

// One partition as the controller assigned it (PartitionRecord, then PartitionChangeRecords).
struct PartitionAssignment {
  std::vector<int32_t> replicas;  // the first is the preferred leader
  std::vector<int32_t> isr;
  // Eligible leader replicas (KIP-966): out of an ISR that was below min.insync.replicas,
  // yet holding everything committed; one may lead when no ISR member is live.
  std::vector<int32_t> elr;
  // A reassignment in progress (KIP-455): `replicas` holds the target's replicas followed by
  // those leaving; `adding` are target replicas catching up, `removing` those that leave
  // once every target replica is in the ISR.
  std::vector<int32_t> adding;
  std::vector<int32_t> removing;
  int32_t leader = -1;            // -1: no leader (every in-sync replica is offline)
  int32_t leader_epoch = 0;       // bumped on every leader change
  int32_t partition_epoch = 0;    // bumped on every change of the partition

  bool hosted_by(int32_t node_id) const;
  bool reassigning() const { return !adding.empty() || !removing.empty(); }
  bool operator==(const PartitionAssignment&) const = default;
};

struct TopicMetadata {
  std::string name;
  protocol::Uuid id;
  std::vector<PartitionAssignment> partitions;  // index = partition id
  // Topic-level overrides only ("retention.ms" -> "3600000"); defaults come from the broker.
  std::map<std::string, std::string> configs;
  bool internal = false;
  // A mirror topic: the link that copies it from the source (empty once promoted, or for an
  // ordinary topic), and the id of the source topic it was created from.
  std::string mirror_link;
  protocol::Uuid source_topic_id;
  // The principal that created the topic (TopicOwnerRecord), counted by the tenant limits
  // that match it; empty for topics the broker created itself or that predate owners.
  std::string owner;

  int32_t partition_count() const { return static_cast<int32_t>(partitions.size()); }
  int32_t replication_factor() const { return partitions.empty() ? 0 : static_cast<int32_t>(partitions[0].replicas.size()); }
  const PartitionAssignment* partition(int32_t index) const {
    return index >= 0 && index < partition_count() ? &partitions[static_cast<size_t>(index)] : nullptr;
  }
};

using TopicPtr = std::shared_ptr<const TopicMetadata>;

class MetadataImage {
 public:
  std::string cluster_id;
  std::vector<BrokerInfo> brokers;  // every registered broker, by node id
  const BrokerInfo* broker(int32_t node_id) const;
  bool live(int32_t node_id) const;  // registered and unfenced
  // The replicas of `a` on brokers that are fenced or gone, in replica order.
  std::vector<int32_t> offline_replicas(const PartitionAssignment& a) const;
  int32_t live_brokers() const;
  // Offset of the last metadata record applied, -1 for an empty log.
  int64_t offset = -1;
  // Feature levels (FeatureLevelRecord, features.h), by name; 0 is a feature set and then
  // disabled, which a registration does not set again.
  std::map<std::string, int16_t> features;
  // The first producer id of the next block to allocate (ProducerIdsRecord).
  int64_t next_producer_id = 0;
  // Mirror links configured on this cluster (the destination side), by name.
  std::map<std::string, MirrorLink> links;
  const MirrorLink* link(std::string_view name) const;
  // Shared between images: copied only when a credential changes.
  std::shared_ptr<const ScramCredentials> scram_credentials = std::make_shared<const ScramCredentials>();
  // True only while a change being applied holds a private copy of scram_credentials: seal()
  // clears it, and a copy of an image never owns what it shares with the original.
  struct NotCopied {
    bool value = false;
    NotCopied() = default;
    NotCopied(const NotCopied&) {}
    NotCopied& operator=(const NotCopied&) {
      value = false;
      return *this;
    }
    operator bool() const { return value; }
    NotCopied& operator=(bool v) {
      value = v;
      return *this;
    }
  };
  NotCopied owns_scram_credentials;
  // Client quotas (ClientQuotaRecord), shared and copied as the credentials are.
  std::shared_ptr<const quota::QuotaSet> client_quotas = std::make_shared<const quota::QuotaSet>();
  NotCopied owns_client_quotas;
  // Tenant limits (TenantLimitRecord), shared and copied as the quotas are.
  std::shared_ptr<const tenant::LimitSet> tenant_limits = std::make_shared<const tenant::LimitSet>();
  NotCopied owns_tenant_limits;
  // Dynamic broker configs (ConfigRecords of BROKER resources), replaced whole on a change.
  std::shared_ptr<const config::DynamicConfigs> broker_configs = std::make_shared<const config::DynamicConfigs>();
  // The topics owned by principals matching `p`, and their partitions (a walk of every topic).
  tenant::Usage tenant_usage(const tenant::Pattern& p) const;
  std::optional<auth::ScramCredential> scram_credential(const std::string& user, auth::ScramMechanism m) const;
  std::shared_ptr<const AclSet> acls = std::make_shared<const AclSet>(AclSet{{}, std::make_shared<const acl::Index>()});
  // Rebuilds the ACL index when a change left it stale; the store calls it before publishing.
  void seal();

  const TopicMetadata* topic(std::string_view name) const;
  const TopicMetadata* topic(const protocol::Uuid& id) const;
  TopicPtr topic_ptr(std::string_view name) const;
  size_t topic_count() const { return topic_count_; }
  // Every topic, in no particular order.
  void for_each_topic(const std::function<void(const TopicPtr&)>& fn) const;
  // Every topic that differs between `older` and this image: (old, new), either null for a
  // topic created or removed since. A topic recreated under the same name comes as one call
  // with both (their ids differ).
  void for_each_changed_topic(const MetadataImage& older,
                              const std::function<void(const TopicPtr& before, const TopicPtr& after)>& fn) const;

  // Builders (used only while composing a new image).
  void put_topic(TopicPtr t);
  void remove_topic(std::string_view name);

  // About 25 topics a bucket at 100,000 topics; an image copy copies 2 x 4096 pointers.
  static constexpr size_t kBuckets = 4096;

 private:
  using Bucket = std::vector<TopicPtr>;
  using Buckets = std::array<std::shared_ptr<const Bucket>, kBuckets>;
  static size_t bucket_of(std::string_view name);
  static size_t bucket_of(const protocol::Uuid& id);
  static Bucket& writable(Buckets& buckets, size_t index);
  static void put(Buckets& buckets, size_t index, const TopicPtr& t, bool by_name);
  static void erase(Buckets& buckets, size_t index, const TopicMetadata& t, bool by_name);

  Buckets by_name_{};
  Buckets by_id_{};
  size_t topic_count_ = 0;
};

// Kafka's rules for topic names: 1..249 characters of [a-zA-Z0-9._-], not "." or "..".
bool valid_topic_name(std::string_view name);

// Topics whose names begin with "__" are the broker's own.
inline bool is_internal_topic(std::string_view name) { return name.starts_with("__"); }

}  // namespace brokerd::metadata
