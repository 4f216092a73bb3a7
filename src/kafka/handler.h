#pragma once
// What every API handler sees, and the declarations of the handlers (one file each under
// handlers/). A handler decodes its request from `body`, does its work through `services`,
// and returns the encoded response with per-partition error codes.
#include <boost/asio/awaitable.hpp>

#include <memory>
#include <optional>

#include "brokerd/common/bytes.h"

#include "brokerd/kafka/services.h"
#include "brokerd/net/request.h"
#include "brokerd/protocol/error_code.h"
#include "brokerd/protocol/framing.h"
#include "brokerd/protocol/wire.h"

namespace brokerd::metadata { class MetadataImage; }

namespace brokerd::kafka {

struct RequestTimeQuota;
struct HandlerContext;

// request_percentage (KIP-124): charges the reactor time the request has used since the last
// charge to its client's bucket, mutes the connection while the client is over its quota,
// and returns the throttle time to tell the client (0 without such a quota).
int32_t charge_request_time(const HandlerContext& ctx);

struct HandlerContext {
  const net::Request& request;
  protocol::Reader& body;
  int16_t version;
  Services& services;
  // The image whose ACLs authorize this request: loaded at the first check, so a request
  // is judged against one set of bindings and a handler checking many topics loads it once.
  mutable std::shared_ptr<const metadata::MetadataImage> acl_image = nullptr;
  // Set when a request_percentage quota applies to the client: the request's time is counted.
  RequestTimeQuota* request_time = nullptr;

  template <typename Msg>
  Msg decode() const {
    Msg m;
    m.decode(body, version);
    return m;
  }
  // The encoded response. Its throttle_time_ms is raised to what the request quota asks, if one
  // applies.
  template <typename Msg>
  net::Response respond(const Msg& msg) const {
    if constexpr (requires { msg.throttle_time_ms; }) {
      if (request_time) {
        if (const int32_t throttle = charge_request_time(*this); throttle > msg.throttle_time_ms) {
          Msg throttled = msg;
          throttled.throttle_time_ms = throttle;
          return encode(throttled);
        }
      }
    }
    return encode(msg);
  }
  template <typename Msg>
  net::Response encode(const Msg& msg) const {
    return net::Response{protocol::encode_response(request.api_key, version, request.correlation_id, msg)};
  }
};

using Handler = boost::asio::awaitable<net::Response> (*)(HandlerContext&);

// The listener the request came in on: brokers are named by their endpoint of that listener.
inline const std::string& listener_of(const HandlerContext& ctx) {
  static const std::string none;
  return ctx.request.connection ? ctx.request.connection->listener : none;
}

// This node's id while its metadata image is older than broker.session.timeout.ms, else -2
// (no node). The controller has fenced such a node and may have moved its leaderships, so
// Metadata and FindCoordinator do not name it as a leader or coordinator until it has caught
// up again: a client sent to a stale leader can keep retrying there.
int32_t withheld_leader(const Services& services);

// For the admin APIs only the active controller decides: sends the request (its encoded body)
// to the controller's listener and returns the answer unchanged (a change once this node's
// metadata image holds it), or nullopt when no controller answered in time.
boost::asio::awaitable<std::optional<net::Response>> forward_to_controller(HandlerContext& ctx, Bytes body);
// The same, for a handler that merges the controller's answer with its own: the answer's
// body (no header), for the request's API key and version.
boost::asio::awaitable<std::optional<Bytes>> forward_body_to_controller(HandlerContext& ctx, Bytes body);

boost::asio::awaitable<net::Response> handle_produce(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_sasl_handshake(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_create_acls(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_describe_acls(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_delete_acls(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_sasl_authenticate(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_alter_user_scram_credentials(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_describe_user_scram_credentials(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_fetch(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_list_offsets(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_metadata(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_api_versions(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_create_topics(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_delete_topics(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_delete_records(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_describe_configs(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_alter_configs(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_create_partitions(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_elect_leaders(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_alter_partition_reassignments(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_list_partition_reassignments(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_list_config_resources(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_incremental_alter_configs(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_describe_cluster(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_describe_log_dirs(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_alter_replica_log_dirs(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_describe_client_quotas(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_alter_client_quotas(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_describe_tenant_limits(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_alter_tenant_limits(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_find_coordinator(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_join_group(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_sync_group(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_heartbeat(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_leave_group(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_offset_commit(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_offset_fetch(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_list_groups(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_describe_groups(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_delete_groups(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_offset_delete(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_init_producer_id(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_describe_producers(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_add_partitions_to_txn(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_add_offsets_to_txn(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_end_txn(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_update_features(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_txn_offset_commit(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_describe_transactions(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_list_transactions(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_describe_topic_partitions(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_describe_quorum(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_offset_for_leader_epoch(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_write_txn_markers(HandlerContext& ctx);
// brokerd's own (proto/brokerd): mirror links.
boost::asio::awaitable<net::Response> handle_create_mirror_links(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_alter_mirror_links(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_describe_mirror_links(HandlerContext& ctx);
boost::asio::awaitable<net::Response> handle_promote_mirror_topics(HandlerContext& ctx);

// The ApiVersions answer to a version this broker does not know (KIP-511): a v0 body with
// UNSUPPORTED_VERSION and the supported ranges, so the client can pick a version.
net::Response api_versions_unsupported(const net::Request& req);

}  // namespace brokerd::kafka
