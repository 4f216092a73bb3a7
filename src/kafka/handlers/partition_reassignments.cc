// AlterPartitionReassignments (API 45) and ListPartitionReassignments (API 46): moving a
// partition's replicas between brokers (metadata/partition_reassignment.h). The node leading
// the metadata quorum commits and lists reassignments itself; any other node sends the request
// to the controller's listener and returns its answer unchanged: a change once its own image
// holds it; a listing at once (its own image may not have a change the controller just
// committed, which a tool polling for progress would take for the end).
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/metadata/reassignment_requests.h"
#include "brokerd/net/blocking_pool.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {

boost::asio::awaitable<net::Response> handle_alter_partition_reassignments(HandlerContext& ctx) {
  auto req = ctx.decode<protocol::AlterPartitionReassignmentsRequest>();
  if (!authorized_cluster(ctx, acl::Operation::alter)) {
    protocol::AlterPartitionReassignmentsResponse refused;
    refused.error_code = protocol::code(protocol::ErrorCode::cluster_authorization_failed);
    co_return ctx.respond(refused);
  }
  auto& svc = ctx.services;
  const int16_t version = ctx.version;
  if (svc.metadata.leads()) {
    auto serve = [&svc, &req, version] { return metadata::answer_alter_partition_reassignments(svc.metadata, req, version); };
    auto resp = co_await svc.blocking.run(std::move(serve));
    co_await svc.partitions.reconcile(svc.metadata.image());  // this node's replicas change at once
    co_return ctx.respond(resp);
  }
  protocol::Writer w;
  req.encode(w, version);
  std::optional<net::Response> forwarded = co_await forward_to_controller(ctx, std::move(w).finish_bytes());
  if (forwarded) co_return std::move(*forwarded);
  protocol::AlterPartitionReassignmentsResponse resp;
  resp.error_code = protocol::code(protocol::ErrorCode::request_timed_out);
  resp.error_message = "no controller answered in time";
  for (const auto& t : req.topics) {
    auto& tr = resp.responses.emplace_back();
    tr.name = t.name;
    for (const auto& p : t.partitions) {
      auto& pr = tr.partitions.emplace_back();
      pr.partition_index = p.partition_index;
      pr.error_code = resp.error_code;
      pr.error_message = resp.error_message;
    }
  }
  co_return ctx.respond(resp);
}

boost::asio::awaitable<net::Response> handle_list_partition_reassignments(HandlerContext& ctx) {
  auto req = ctx.decode<protocol::ListPartitionReassignmentsRequest>();
  if (!authorized_cluster(ctx, acl::Operation::describe)) {
    protocol::ListPartitionReassignmentsResponse refused;
    refused.error_code = protocol::code(protocol::ErrorCode::cluster_authorization_failed);
    co_return ctx.respond(refused);
  }
  auto& svc = ctx.services;
  if (svc.metadata.leads()) co_return ctx.respond(metadata::answer_list_partition_reassignments(svc.metadata, req));
  protocol::Writer w;
  req.encode(w, ctx.version);
  std::optional<net::Response> forwarded = co_await forward_to_controller(ctx, std::move(w).finish_bytes());
  if (forwarded) co_return std::move(*forwarded);
  protocol::ListPartitionReassignmentsResponse resp;
  resp.error_code = protocol::code(protocol::ErrorCode::request_timed_out);
  resp.error_message = "no controller answered in time";
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
