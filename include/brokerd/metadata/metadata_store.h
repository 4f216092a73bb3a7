#pragma once
// The cluster metadata on this node: the state machine of the metadata quorum. Committed
// entries of the quorum's log (KRaft metadata records) are replayed into a MetadataImage,
// published atomically; readers take image() without locks. Changes are proposed to the
// quorum and answered once committed and applied here. Only the quorum's leader writes:
// elsewhere a change goes to the active controller through the ControllerChannel (if one is
// set; otherwise NOT_CONTROLLER) and is answered once this node's image has it too. Writers
// are serialised by a mutex and block until the change commits, so call them off the
// reactors.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "brokerd/metadata/controller_channel.h"
#include "brokerd/metadata/features.h"
#include "brokerd/metadata/metadata_image.h"
#include "brokerd/metadata/partition_election.h"
#include "brokerd/metadata/producer_ids.h"
#include "brokerd/metadata/topic_config.h"
#include "brokerd/common/bytes.h"
#include "brokerd/protocol/error_code.h"
#include "brokerd/quorum/quorum_log.h"

namespace brokerd::metadata {

struct TopicChange {
  protocol::ErrorCode error = protocol::ErrorCode::none;
  std::string message;  // for the response's error_message
  std::shared_ptr<const TopicMetadata> topic;
  std::shared_ptr<const MetadataImage> image;  // the image that includes the change
};

class MetadataStore final : public quorum::QuorumListener {
 public:
  MetadataStore(std::string cluster_id, int32_t node_id);
  ~MetadataStore() override;

  // The quorum whose log this store replays and writes to; set before the quorum starts.
  void attach(quorum::QuorumLog& quorum) { quorum_ = &quorum; }
  // Where changes go while this node does not lead the quorum; set before serving requests.
  void forward_to(ControllerChannel* channel) { channel_ = channel; }
  ControllerChannel* channel() const { return channel_; }
  // Blocks until the quorum has a leader and this node has applied everything committed
  // before it joined, or `stop` says to give up. False when it gave up.
  bool wait_until_caught_up(const std::function<bool()>& stop);
  // Called with every image published from now on (on the quorum's thread; keep it short).
  void on_publish(std::function<void(std::shared_ptr<const MetadataImage>)> fn);

  std::shared_ptr<const MetadataImage> image() const { return image_.load(); }
  // The node leading the metadata quorum (the controller), -1 while unknown.
  int32_t controller_id() const;
  // The controller id clients are told (Metadata, DescribeCluster), as Kafka's KRaft brokers
  // do: a live broker, not the quorum's leader, since every broker forwards what clients send
  // the controller. This node when it is live (the client reached it), else the quorum's
  // leader if it is a live broker, else the first live broker; -1 when none serves. Naming
  // the quorum's leader made librdkafka's admin clients wait for it after it died, until
  // their requests timed out. DescribeQuorum names the real controller.
  int32_t controller_for_clients() const;
  // This node is the controller and has replayed everything before its epoch.
  bool leads() const;
  // Milliseconds since this node last knew its image held everything the quorum had
  // committed (QuorumStatus::confirmed_at_ms); very large before the first time. A node that
  // was paused or cut off from the quorum sees it grow: its image may name leaders that the
  // controller has since replaced.
  int64_t image_age_ms() const;
  // The rule both the leases of partition leaders and Metadata answers follow: the image is
  // current while it is no older than a broker session (broker.session.timeout.ms).
  bool image_current(int64_t session_timeout_ms) const { return image_age_ms() <= session_timeout_ms; }

  // Each validates first (name, counts, configs against the topic properties); with
  // validate_only nothing is written. Replicas are placed on the live brokers by the rule of
  // placement.h unless `assignment` gives each new partition's replicas (live brokers only);
  // with an assignment, its size is the partition count. A topic with an owner (the principal
  // asking) must fit the tenant limits that match the owner (else POLICY_VIOLATION), as must
  // partitions added to it.
  TopicChange create_topic(const std::string& name, int32_t partitions, int32_t replication_factor,
                           const std::map<std::string, std::string>& configs, bool validate_only,
                           std::vector<std::vector<int32_t>> assignment = {}, std::string owner = {});
  // Several at once, one answer each in order, committed together (one change of the
  // metadata log for up to a few thousand records) rather than one commit per topic.
  std::vector<TopicChange> create_topics(std::vector<TopicSpec> specs, bool validate_only);
  TopicChange delete_topic(const std::string& name);
  TopicChange create_partitions(const std::string& name, int32_t total, bool validate_only,
                                std::vector<std::vector<int32_t>> assignment = {});
  // Replaces the topic's overrides with `configs`.
  TopicChange set_topic_configs(const std::string& name, const std::map<std::string, std::string>& configs,
                                bool validate_only);
  // Replaces the dynamic configs of a broker resource (a broker id, or "" for the cluster-wide
  // defaults) with `configs`, each checked by config::check_dynamic. The answer has no topic.
  TopicChange set_broker_configs(const std::string& resource, const std::map<std::string, std::string>& configs,
                                 bool validate_only);

  // BrokerRegistration on the controller: records the broker, fenced, with a new epoch
  // (larger than any before). Blocks until committed; returns the epoch, or an error.
  // A broker registers (fenced). After an unclean stop it may have lost unflushed data: it
  // leaves the ISRs and ELRs where another replica is eligible, in the same change.
  std::pair<protocol::ErrorCode, int64_t> register_broker(BrokerInfo broker, const std::string& listener,
                                                          bool clean_shutdown = true);
  // The broker default of min.insync.replicas, for elections of topics without their own.
  void set_default_min_isr(int32_t n) { default_min_isr_ = n; }
  // password.encoder.secret: the passwords of a mirror link's source settings are sealed
  // with it before they are written (auth/sealed_secret.h). Set before serving.
  void set_password_secret(std::string secret) { password_secret_ = std::move(secret); }
  // Defects of the replication rules to elect with (replication::Bug), in test builds only
  // (BROKERD_INJECT_BUGS). Set before the quorum starts.
  void set_injected_bugs(uint32_t bugs) { injected_bugs_ = bugs; }
  // Fences (heartbeats missed, shut down) or unfences (caught up) a registration.
  // `wait` bounds the wait for the commit (a stopping broker does not wait long).
  protocol::ErrorCode set_broker_fenced(int32_t id, int64_t epoch, bool fenced,
                                        std::chrono::milliseconds wait = std::chrono::seconds(30));

  // ElectLeaders on the controller: the elections (partition_election.h) committed together,
  // with one answer per partition; NOT_CONTROLLER (in `error`) on any other node, which
  // forwards the request instead. Blocks until committed.
  struct ElectionAnswer {
    protocol::ErrorCode error = protocol::ErrorCode::none;
    std::string message;
    std::vector<ElectionResult> results;
  };
  ElectionAnswer elect_leaders(const std::optional<std::vector<ElectionTarget>>& targets, ElectionType type);
  // The automatic leader balance (auto.leader.rebalance.enable), on the controller only:
  // commits rebalance_leaders' elections and returns how many partitions changed leader.
  size_t rebalance_leaders(int32_t imbalance_percent);

  // AlterPartitionReassignments on the controller (partition_reassignment.h): starts, replaces
  // or (replicas unset) cancels each named partition's reassignment, committed together, one
  // answer per target; NOT_CONTROLLER (in `error`) on any other node, which forwards the
  // request instead. Blocks until committed.
  struct ReassignmentTarget {
    std::string topic;
    int32_t partition = 0;
    std::optional<std::vector<int32_t>> replicas;
  };
  struct ReassignmentAnswer {
    protocol::ErrorCode error = protocol::ErrorCode::none;
    std::string message;
    std::vector<std::pair<protocol::ErrorCode, std::string>> results;  // per target, in order
  };
  ReassignmentAnswer reassign_partitions(const std::vector<ReassignmentTarget>& targets,
                                         bool allow_replication_factor_change);

  // The answer to one change the controller made or refused.
  struct ChangeAnswer {
    protocol::ErrorCode error = protocol::ErrorCode::none;
    std::string message;
  };

  // A config set changed as a function of the set as it stands (IncrementalAlterConfigs):
  // `edit` gets the image and the resource's current set, changes the set in place, and
  // answers an error to refuse. It runs under the write mutex, against the image every
  // earlier change is in, so no other config write comes between its read and the commit.
  // The result is checked as set_topic_configs / set_broker_configs check theirs. A write
  // commits on the controller only (NOT_CONTROLLER elsewhere: the request is forwarded
  // instead); validate_only writes nothing.
  using ConfigEdit = std::function<ChangeAnswer(const MetadataImage& current, std::map<std::string, std::string>& configs)>;
  TopicChange edit_topic_configs(const std::string& name, const ConfigEdit& edit, bool validate_only);
  TopicChange edit_broker_configs(const std::string& resource, const ConfigEdit& edit, bool validate_only);

  // SCRAM credentials (KIP-554), on the controller only: NOT_CONTROLLER elsewhere. Each
  // change sets (credential) or deletes (nullopt) one user's credential for one mechanism;
  // the valid ones commit together. One answer per change, in order: RESOURCE_NOT_FOUND for
  // a deletion of a credential that does not exist. Blocks until committed.
  struct ScramChange {
    std::string user;
    auth::ScramMechanism mechanism = auth::ScramMechanism::sha256;
    std::optional<auth::ScramCredential> credential;
  };
  std::vector<ChangeAnswer> alter_scram_credentials(const std::vector<ScramChange>& changes);

  // Client quotas (KIP-546), on the controller only: NOT_CONTROLLER elsewhere. Each change
  // sets or removes quotas of one entity (checked by the caller); the changes commit together
  // and are answered alike. Blocks until committed.
  struct QuotaChange {
    quota::Entity entity;
    std::vector<std::tuple<std::string, double, bool>> ops;  // key, value, remove
  };
  ChangeAnswer alter_client_quotas(const std::vector<QuotaChange>& changes);

  // Tenant limits (tenant_limits.h), on the controller only: NOT_CONTROLLER elsewhere. Each
  // change sets or removes limits of one pattern (checked by the caller); the changes commit
  // together and are answered alike. Limits lowered below what a tenant holds refuse its next
  // creation, and remove nothing. Blocks until committed.
  struct TenantLimitChange {
    tenant::Pattern pattern;
    std::vector<std::tuple<std::string, int64_t, bool>> ops;  // key, value, remove
  };
  ChangeAnswer alter_tenant_limits(const std::vector<TenantLimitChange>& changes);

  // ACLs, on the controller only: NOT_CONTROLLER elsewhere. Creating a binding that exists
  // already succeeds and changes nothing; the new ones commit together. Each deletion filter
  // is answered with the bindings it removed (a binding two filters match is removed once).
  // Both block until committed.
  std::vector<ChangeAnswer> create_acls(std::vector<acl::Binding> bindings);
  struct AclDeletion {
    ChangeAnswer answer;
    std::vector<acl::Binding> removed;
  };
  std::vector<AclDeletion> delete_acls(const std::vector<acl::Filter>& filters);

  // Mirror links (mirror_link.h), on the controller only: NOT_CONTROLLER elsewhere (the
  // handlers forward the request instead). Each blocks until committed.
  ChangeAnswer create_link(MirrorLink link, bool validate_only);
  // Pause, resume, or remove (refused while the link still has mirror topics: promote or
  // delete them first).
  ChangeAnswer alter_link(const std::string& name, LinkOperation operation);
  // Makes the link's mirror topics named (every one when `topics` is unset) ordinary,
  // writable topics, together in one change: one answer per topic, by name.
  std::pair<ChangeAnswer, std::vector<std::pair<std::string, ChangeAnswer>>> promote_mirror_topics(
      const std::string& link, const std::optional<std::vector<std::string>>& topics);

  // Feature levels (features.h), on the controller only: NOT_CONTROLLER elsewhere. Every
  // update is checked against the image; one refused refuses them all (its error and
  // message), else they commit together (nothing with validate_only). Blocks until committed.
  ChangeAnswer update_features(const std::vector<FeatureUpdate>& updates, bool validate_only);

  // Kafka's AllocateProducerIds: the next block of producer ids for `broker_id`, committed by
  // a ProducerIdsRecord before it is returned, so blocks never overlap across restarts.
  // Blocks; throws std::runtime_error when the quorum does not commit it.
  // Leaders' ISR changes (AlterPartition), each checked by replication's rules against the
  // partition as it stands, the accepted ones committed together in one change; forwarded to
  // the controller from other nodes. One answer per item, in order.
  std::vector<AlterPartitionAnswer> alter_partitions(const std::vector<AlterPartitionItem>& items);
  ProducerIdBlock allocate_producer_ids(int32_t broker_id, int64_t broker_epoch);
  // This node's producer-id manager, fed by allocate_producer_ids.
  ProducerIdManager& producer_ids() { return *producer_ids_; }

  // quorum::QuorumListener
  void load_snapshot(const raft::Snapshot& snapshot) override;
  void apply(const std::vector<raft::Entry>& entries) override;
  std::function<std::string()> snapshot() override;

 private:
  // Proposes one change and waits until it is committed and applied. NOT_CONTROLLER when
  // this node does not lead the quorum, REQUEST_TIMED_OUT when the commit did not come.
  protocol::ErrorCode commit(const std::vector<Bytes>& records, std::string* message,
                             std::chrono::milliseconds wait = std::chrono::seconds(30));
  void publish(std::shared_ptr<MetadataImage> next);
  // Commits records that need no look at the image (keyed settings: quotas, tenant limits);
  // NOT_CONTROLLER off the controller, nothing for no records.
  ChangeAnswer commit_settings(const std::vector<Bytes>& records);
  TopicChange applied(const std::string& name, std::shared_ptr<const TopicMetadata> proposed) const;
  TopicChange check_topic(TopicSpec& spec, const MetadataImage& current) const;
  void forward_create_topics(const std::vector<TopicSpec>& specs, const std::vector<size_t>& valid,
                             std::vector<TopicChange>& out);
  // Waits (bounded) until this node's image satisfies `done`: a forwarded change has arrived.
  void wait_for_image(const std::function<bool(const MetadataImage&)>& done);

  std::mutex write_mutex_;
  const int32_t self_id_;
  uint32_t placement_cursor_;  // where the next partition's leader goes (write_mutex_)
  quorum::QuorumLog* quorum_ = nullptr;
  std::atomic<std::shared_ptr<const MetadataImage>> image_;
  std::unique_ptr<ProducerIdManager> producer_ids_;
  ControllerChannel* channel_ = nullptr;
  std::atomic<int32_t> default_min_isr_{1};
  uint32_t injected_bugs_ = 0;
  std::string password_secret_;
  std::mutex publish_mutex_;
  std::condition_variable published_;
  std::vector<std::function<void(std::shared_ptr<const MetadataImage>)>> publish_hooks_;
};

}  // namespace brokerd::metadata
