#include "brokerd/controller/controller_dispatcher.h"

#include "brokerd/metadata/elect_leaders_request.h"
#include "brokerd/metadata/mirror_link_requests.h"
#include "brokerd/metadata/acl_requests.h"
#include "brokerd/metadata/scram_credential_requests.h"
#include "brokerd/metadata/client_quota_requests.h"
#include "brokerd/metadata/config_requests.h"
#include "brokerd/metadata/reassignment_requests.h"
#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/controller/broker_registry.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/protocol/error_code.h"
#include "brokerd/protocol/framing.h"
#include "brokerd/protocol/messages/api_table.h"
#include "brokerd/protocol/messages/api_versions_response.h"
#include "brokerd/protocol/messages/broker_heartbeat_response.h"
#include "brokerd/protocol/messages/broker_registration_response.h"
#include "brokerd/protocol/messages/describe_quorum_request.h"
#include "brokerd/protocol/messages/describe_quorum_response.h"
#include "brokerd/quorum/kraft_codec.h"
#include "brokerd/quorum/quorum_driver.h"
#include "brokerd/security/authorization.h"
#include "brokerd/security/sasl_server.h"
#include "brokerd/metadata/metadata_store.h"
#include "controller/admin_requests.h"
#include "controller/envelope.h"
#include "brokerd/metadata/tenant_limit_requests.h"

namespace brokerd::controller {

namespace {

constexpr int16_t kApiVersions = 18, kDescribeQuorum = 55, kBrokerRegistration = 62, kBrokerHeartbeat = 63;
constexpr int16_t kSaslHandshake = 17, kSaslAuthenticate = 36;
constexpr int16_t kCreateTopics = 19, kDeleteTopics = 20, kAlterConfigs = 33, kCreatePartitions = 37,
                  kAllocateProducerIds = 67, kAlterPartition = 56;

net::Response close_connection() { return net::Response{{}, false, true}; }

net::Response respond_bytes(const net::Request& req, int16_t version, const Bytes& body) {
  protocol::Writer w;
  protocol::encode_response_header(w, req.api_key, version, req.correlation_id);
  w.raw(body);
  return net::Response{std::move(w).finish()};
}

void add_apis(protocol::ApiVersionsResponse& resp) {
  for (const auto& a : controller_apis()) {
    auto& v = resp.api_keys.emplace_back();
    v.api_key = a.api_key;
    v.min_version = a.min_version;
    v.max_version = a.max_version;
  }
}

const ControllerApi* find(int16_t key) {
  for (const auto& a : controller_apis())
    if (a.api_key == key) return &a;
  return nullptr;
}

// The id of the replica a KRaft request comes from.
raft::ReplicaId sender_of(const raft::MessageBody& body) {
  if (const auto* r = std::get_if<raft::VoteRequest>(&body)) return r->candidate_id;
  if (const auto* r = std::get_if<raft::BeginQuorumEpochRequest>(&body)) return r->leader_id;
  if (const auto* r = std::get_if<raft::EndQuorumEpochRequest>(&body)) return r->leader_id;
  if (const auto* r = std::get_if<raft::FetchRequest>(&body)) return r->replica_id;
  if (const auto* r = std::get_if<raft::FetchSnapshotRequest>(&body)) return r->replica_id;
  return raft::kNoReplica;
}

}  // namespace

const std::vector<ControllerApi>& controller_apis() {
  static const std::vector<ControllerApi> apis = {
      {1, 4, quorum::kFetchVersion},   {18, 0, 4},
      {kSaslHandshake, 1, 1},          {kSaslAuthenticate, 0, 2},
      {52, 0, quorum::kVoteVersion},   {53, 0, quorum::kBeginQuorumEpochVersion},
      {54, 0, quorum::kEndQuorumEpochVersion}, {55, 0, 2},
      {59, 0, quorum::kFetchSnapshotVersion}, {kBrokerRegistration, 0, 3},
      {kBrokerHeartbeat, 0, 1},
      {kCreateTopics, kCreateTopicsVersion, kCreateTopicsVersion},
      {kDeleteTopics, kDeleteTopicsVersion, kDeleteTopicsVersion},
      {kAlterConfigs, kAlterConfigsVersion, kAlterConfigsVersion},
      {metadata::kIncrementalAlterConfigs, 0, metadata::kIncrementalAlterConfigsMaxVersion},
      {kCreatePartitions, kCreatePartitionsVersion, kCreatePartitionsVersion},
      {kAllocateProducerIds, kAllocateProducerIdsVersion, kAllocateProducerIdsVersion},
      {kAlterPartition, kAlterPartitionVersion, kAlterPartitionMaxVersion},
      {metadata::kElectLeaders, metadata::kElectLeadersMinVersion, metadata::kElectLeadersMaxVersion},
      {metadata::kAlterPartitionReassignments, 0, metadata::kAlterPartitionReassignmentsMaxVersion},
      {metadata::kListPartitionReassignments, 0, 0},
      {metadata::kCreateMirrorLinks, 0, 0},
      {metadata::kAlterUserScramCredentials, 0, 0},
      {metadata::kAlterClientQuotas, 0, 1},
      {metadata::kCreateAcls, metadata::kAclsMinVersion, metadata::kAclsMaxVersion},
      {metadata::kDeleteAcls, metadata::kAclsMinVersion, metadata::kAclsMaxVersion},
      {metadata::kAlterMirrorLinks, 0, 0},
      {metadata::kPromoteMirrorTopics, 0, 0},
      {metadata::kAlterTenantLimits, 0, 0},
      {kEnvelope, 0, 0},
  };
  return apis;
}

template <typename Req, typename F>
boost::asio::awaitable<net::Response> ControllerDispatcher::on_blocking_pool(const net::Request& req,
                                                                            protocol::Reader& body, F serve) {
  Req r;
  r.decode(body, req.api_version);
  auto work = [serve, r = std::move(r)] { return serve(r); };
  auto resp = co_await blocking_.run(std::move(work));
  co_return net::Response{protocol::encode_response(req.api_key, req.api_version, req.correlation_id, resp)};
}

// An envelope carries a CreateTopics a broker forwards for a client: the topics are created
// for (owned by) the client's principal. Nothing else travels in one.
boost::asio::awaitable<net::Response> ControllerDispatcher::envelope(const net::Request& req, protocol::Reader& body) {
  protocol::EnvelopeRequest env;
  env.decode(body, req.api_version);
  protocol::EnvelopeResponse refused;
  refused.response_data = std::nullopt;
  auto answer = [&req](const protocol::EnvelopeResponse& resp) {
    return net::Response{protocol::encode_response(req.api_key, req.api_version, req.correlation_id, resp)};
  };
  const auto principal = env.request_principal ? decode_principal(*env.request_principal) : std::nullopt;
  if (!principal) {
    refused.error_code = protocol::code(protocol::ErrorCode::principal_deserialization_failure);
    co_return answer(refused);
  }
  protocol::Reader inner(env.request_data);
  const auto header = protocol::decode_request_header(inner);
  if (header.api_key != kCreateTopics || header.api_version != kCreateTopicsVersion) {
    refused.error_code = protocol::code(protocol::ErrorCode::invalid_request);
    co_return answer(refused);
  }
  protocol::CreateTopicsRequest create;
  create.decode(inner, header.api_version);
  auto work = [this, create = std::move(create), owner = *principal] { return serve_create_topics(metadata_, create, owner); };
  auto created = co_await blocking_.run(std::move(work));
  protocol::Writer w;
  protocol::encode_response_header(w, header.api_key, header.api_version, header.correlation_id);
  created.encode(w, header.api_version);
  protocol::EnvelopeResponse resp;
  resp.response_data = std::move(w).finish_bytes();
  co_return answer(resp);
}

net::Response ControllerDispatcher::sasl(const net::Request& req, protocol::Reader& body) {
  auto respond = [&req](const auto& pair) {
    return net::Response{protocol::encode_response(req.api_key, req.api_version, req.correlation_id, pair.first),
                         true, pair.second};
  };
  if (req.api_key == kSaslHandshake) {
    protocol::SaslHandshakeRequest hs;
    hs.decode(body, req.api_version);
    auto& metadata = metadata_;
    return respond(security::answer_sasl_handshake(*req.connection, sasl_, req.api_version, hs,
                                                   [&metadata](const std::string& user, auth::ScramMechanism m) {
                                                     return metadata.image()->scram_credential(user, m);
                                                   }));
  }
  protocol::SaslAuthenticateRequest auth_req;
  auth_req.decode(body, req.api_version);
  return respond(security::answer_sasl_authenticate(*req.connection, sasl_, auth_req));
}

bool ControllerDispatcher::authorized(const net::Request& req) {
  if (!authorization_.enabled || req.api_key == kApiVersions || req.api_key == kSaslHandshake ||
      req.api_key == kSaslAuthenticate)
    return true;
  static const std::string anonymous = "User:ANONYMOUS";
  const std::string& principal = req.connection ? req.connection->principal : anonymous;
  const std::string_view peer = req.connection ? std::string_view(req.connection->peer) : std::string_view("*");
  const auto op = req.api_key == kDescribeQuorum ? acl::Operation::describe : acl::Operation::cluster_action;
  const auto image = metadata_.image();
  if (authorization_.allows(*image->acls->index, principal, peer, op, acl::ResourceType::cluster, acl::kClusterName))
    return true;
  // A node may describe the quorum whose log it replicates: it asks the controller for its
  // high watermark after every change it forwards (commit_barrier.h).
  if (req.api_key == kDescribeQuorum &&
      authorization_.allows(*image->acls->index, principal, peer, acl::Operation::cluster_action,
                            acl::ResourceType::cluster, acl::kClusterName))
    return true;
  if (refusal_log_.allow(static_cast<int32_t>(std::hash<std::string>{}(principal)), steady_clock_ms()))
    module_logger("security")->warn("refusing {} from {} on the controller listener (API key {}): it may not {} the "
                                    "cluster (super.users, or an ACL for the principal)", principal, peer, req.api_key,
                                    acl::name(op));
  return false;
}

boost::asio::awaitable<net::Response> ControllerDispatcher::dispatch(net::Request req) {
  static auto log = module_logger("quorum");
  const char* peer = req.connection ? req.connection->peer.c_str() : "?";
  if (const char* why = security::unauthenticated(req)) {
    log->info("closing controller connection from {}: API key {} sent {}", peer, req.api_key, why);
    co_return close_connection();
  }
  const ControllerApi* api = find(req.api_key);
  if (!api || req.api_version < api->min_version || req.api_version > api->max_version) {
    if (req.api_key == kApiVersions) {
      protocol::ApiVersionsResponse resp;
      resp.error_code = protocol::code(protocol::ErrorCode::unsupported_version);
      add_apis(resp);
      co_return net::Response{protocol::encode_response(req.api_key, 0, req.correlation_id, resp)};
    }
    log->warn("closing controller connection from {}: API key {} v{} is not served on the controller listener", peer,
              req.api_key, req.api_version);
    co_return close_connection();
  }
  protocol::Reader body(req.frame.data.subspan(req.header_end), req.frame.owner);
  try {
    protocol::skip_request_header_tags(body, req.api_key, req.api_version);
    const auto rest = req.frame.data.subspan(req.frame.data.size() - body.remaining());
    if (req.api_key == kApiVersions) {
      protocol::ApiVersionsResponse resp;
      add_apis(resp);
      co_return net::Response{protocol::encode_response(req.api_key, req.api_version, req.correlation_id, resp)};
    }
    if (req.api_key == kSaslHandshake || req.api_key == kSaslAuthenticate) {
      if (!req.connection) co_return close_connection();
      co_return sasl(req, body);
    }
    if (!authorized(req)) {
      const auto refused = protocol::code(protocol::ErrorCode::cluster_authorization_failed);
      auto refuse = [&](auto resp) {
        resp.error_code = refused;
        return net::Response{protocol::encode_response(req.api_key, req.api_version, req.correlation_id, resp)};
      };
      if (req.api_key == kDescribeQuorum) co_return refuse(protocol::DescribeQuorumResponse{});
      if (req.api_key == kBrokerRegistration) co_return refuse(protocol::BrokerRegistrationResponse{});
      if (req.api_key == kBrokerHeartbeat) co_return refuse(protocol::BrokerHeartbeatResponse{});
      co_return close_connection();
    }
    if (req.api_key == kDescribeQuorum) {
      protocol::DescribeQuorumRequest dq;
      dq.decode(body, req.api_version);
      auto q = co_await quorum_.describe();
      co_return respond_bytes(req, req.api_version,
                              quorum::encode_describe_quorum(req.api_version, q, quorum_.options().voters));
    }
    if (req.api_key == kBrokerRegistration) {
      co_return co_await on_blocking_pool<protocol::BrokerRegistrationRequest>(
          req, body, [this](const auto& r) { return brokers_.registration(r); });
    }
    if (req.api_key == kBrokerHeartbeat) {
      // Most heartbeats only renew a session: answered here, never queued behind the blocking
      // pool's fsyncs (a late answer would cost the broker its session).
      protocol::BrokerHeartbeatRequest hb;
      hb.decode(body, req.api_version);
      if (req.connection && !req.connection->close_watch)
        req.connection->close_watch = brokers_.watch_connection(hb.broker_id);
      if (auto resp = brokers_.answer_at_once(hb))
        co_return net::Response{protocol::encode_response(req.api_key, req.api_version, req.correlation_id, *resp)};
      auto work = [this, hb = std::move(hb)] { return brokers_.heartbeat(hb); };
      auto resp = co_await blocking_.run(std::move(work));
      co_return net::Response{protocol::encode_response(req.api_key, req.api_version, req.correlation_id, resp)};
    }
    switch (req.api_key) {
      case kCreateTopics:
        co_return co_await on_blocking_pool<protocol::CreateTopicsRequest>(
            req, body, [this](const auto& r) { return serve_create_topics(metadata_, r); });
      case kDeleteTopics:
        co_return co_await on_blocking_pool<protocol::DeleteTopicsRequest>(
            req, body, [this](const auto& r) { return serve_delete_topics(metadata_, r); });
      case kCreatePartitions:
        co_return co_await on_blocking_pool<protocol::CreatePartitionsRequest>(
            req, body, [this](const auto& r) { return serve_create_partitions(metadata_, r); });
      case kAlterConfigs:
        co_return co_await on_blocking_pool<protocol::AlterConfigsRequest>(
            req, body, [this](const auto& r) { return serve_alter_configs(metadata_, r); });
      case metadata::kIncrementalAlterConfigs:
        co_return co_await on_blocking_pool<protocol::IncrementalAlterConfigsRequest>(req, body, [this](const auto& r) {
          return metadata::answer_incremental_alter_configs(metadata_, r, statics_);
        });
      case kAllocateProducerIds:
        co_return co_await on_blocking_pool<protocol::AllocateProducerIdsRequest>(
            req, body, [this](const auto& r) { return serve_allocate_producer_ids(metadata_, r); });
      case kAlterPartition: {
        const int16_t v = req.api_version;
        co_return co_await on_blocking_pool<protocol::AlterPartitionRequest>(
            req, body, [this, v](const auto& r) { return serve_alter_partition(metadata_, r, v); });
      }
      case metadata::kElectLeaders: {
        const int16_t v = req.api_version;
        co_return co_await on_blocking_pool<protocol::ElectLeadersRequest>(
            req, body, [this, v](const auto& r) { return metadata::answer_elect_leaders(metadata_, r, v); });
      }
      case metadata::kAlterPartitionReassignments: {
        const int16_t v = req.api_version;
        co_return co_await on_blocking_pool<protocol::AlterPartitionReassignmentsRequest>(req, body, [this, v](const auto& r) {
          return metadata::answer_alter_partition_reassignments(metadata_, r, v);
        });
      }
      case metadata::kListPartitionReassignments:
        co_return co_await on_blocking_pool<protocol::ListPartitionReassignmentsRequest>(
            req, body, [this](const auto& r) { return metadata::answer_list_partition_reassignments(metadata_, r); });
      case metadata::kCreateMirrorLinks:
        co_return co_await on_blocking_pool<protocol::CreateMirrorLinksRequest>(
            req, body, [this](const auto& r) { return metadata::answer_create_mirror_links(metadata_, r); });
      case metadata::kAlterMirrorLinks:
        co_return co_await on_blocking_pool<protocol::AlterMirrorLinksRequest>(
            req, body, [this](const auto& r) { return metadata::answer_alter_mirror_links(metadata_, r); });
      case metadata::kCreateAcls:
        co_return co_await on_blocking_pool<protocol::CreateAclsRequest>(
            req, body, [this](const auto& r) { return metadata::answer_create_acls(metadata_, r); });
      case metadata::kDeleteAcls:
        co_return co_await on_blocking_pool<protocol::DeleteAclsRequest>(
            req, body, [this](const auto& r) { return metadata::answer_delete_acls(metadata_, r); });
      case metadata::kAlterClientQuotas:
        co_return co_await on_blocking_pool<protocol::AlterClientQuotasRequest>(
            req, body, [this](const auto& r) { return metadata::answer_alter_client_quotas(metadata_, r); });
      case metadata::kAlterUserScramCredentials:
        co_return co_await on_blocking_pool<protocol::AlterUserScramCredentialsRequest>(
            req, body, [this](const auto& r) { return metadata::answer_alter_user_scram_credentials(metadata_, r); });
      case metadata::kAlterTenantLimits:
        co_return co_await on_blocking_pool<protocol::AlterTenantLimitsRequest>(
            req, body, [this](const auto& r) { return metadata::answer_alter_tenant_limits(metadata_, r); });
      case kEnvelope:
        co_return co_await envelope(req, body);
      case metadata::kPromoteMirrorTopics:
        co_return co_await on_blocking_pool<protocol::PromoteMirrorTopicsRequest>(
            req, body, [this](const auto& r) { return metadata::answer_promote_mirror_topics(metadata_, r); });
      default:
        break;
    }
    std::optional<std::string> cluster_id;
    raft::MessageBody request =
        quorum::decode_request(req.api_key, req.api_version, rest, quorum_.options().max_fetch_entries, &cluster_id);
    const raft::ReplicaId from = sender_of(request);
    if (cluster_id && !cluster_id->empty() && *cluster_id != quorum_.options().cluster_id) {
      // Refused with INCONSISTENT_CLUSTER_ID, so that the sender can say why it cannot join.
      if (mismatch_log_.allow(from, steady_clock_ms())) {
        log->warn("refusing KRaft requests from node {} ({}): it belongs to cluster {}, this node to {} "
                  "(controller.quorum.voters or cluster.id differ between the nodes)",
                  from, peer, *cluster_id, quorum_.options().cluster_id);
      }
      co_return respond_bytes(req, req.api_version,
                              quorum::encode_response(req.api_key, req.api_version,
                                                      quorum::error_response(req.api_key, raft::Errc::inconsistent_cluster_id)));
    }
    raft::MessageBody answer = co_await quorum_.handle(from, std::move(request));
    co_return respond_bytes(req, req.api_version, quorum::encode_response(req.api_key, req.api_version, answer));
  } catch (const protocol::DecodeError& e) {
    log->warn("closing controller connection from {}: malformed request (API key {} v{}): {}", peer, req.api_key,
              req.api_version, e.what());
    co_return close_connection();
  }
}

}  // namespace brokerd::controller
