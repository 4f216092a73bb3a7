// DescribeCluster: the cluster id, the controller a client may talk to, and the brokers
// (v2: the fenced ones too when asked, marked). A broker listener serves the brokers endpoint
// type only.
#include <fmt/format.h>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/protocol/messages/describe_cluster_request.h"
#include "brokerd/protocol/messages/describe_cluster_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {
namespace {

using protocol::DescribeClusterRequest;
using protocol::DescribeClusterResponse;
using protocol::ErrorCode;

constexpr int8_t kBrokers = 1, kControllers = 2;

}  // namespace

boost::asio::awaitable<net::Response> handle_describe_cluster(HandlerContext& ctx) {
  auto req = ctx.decode<DescribeClusterRequest>();
  DescribeClusterResponse resp;
  resp.endpoint_type = kBrokers;
  int8_t asked = ctx.version >= 1 ? req.endpoint_type : kBrokers;
  if (asked != kBrokers && asked != kControllers) {
    resp.error_code = protocol::code(ErrorCode::unsupported_endpoint_type);
    resp.error_message = fmt::format("Unsupported endpoint type {}", asked);
    co_return ctx.respond(resp);
  }
  if (asked == kControllers) {
    resp.error_code = protocol::code(ErrorCode::mismatched_endpoint_type);
    resp.error_message = "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER";
    co_return ctx.respond(resp);
  }

  auto image = ctx.services.metadata.image();
  resp.cluster_id = image->cluster_id;
  resp.controller_id = ctx.services.metadata.controller_for_clients();
  const bool with_fenced = ctx.version >= 2 && req.include_fenced_brokers;
  for (const auto& b : image->brokers) {
    if (b.fenced && !with_fenced) continue;  // registered but not serving
    DescribeClusterResponse::DescribeClusterBroker out;
    out.broker_id = b.node_id;
    const auto at = metadata::endpoint_for(b, listener_of(ctx));
    out.host = at.host;
    out.port = at.port;
    if (!b.rack.empty()) out.rack = b.rack;
    out.is_fenced = b.fenced;
    resp.brokers.push_back(std::move(out));
  }
  if (req.include_cluster_authorized_operations)
    resp.cluster_authorized_operations = authorized_operations(ctx, acl::ResourceType::cluster, acl::kClusterName);
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
