#pragma once
// The shape of a handler whose request only the active controller answers: served here when
// this node leads the metadata quorum (off the reactor, then the partitions reconcile with
// the new image), forwarded to the controller otherwise (and answered once this node's image
// holds the change).
#include <optional>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/net/blocking_pool.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {

// Serves `Req` on the controller, or forwards it. Every such request changes the cluster's
// metadata and needs `op` (ALTER unless said) on the cluster. `refuse(req, resp, error,
// message)` fills the answer when the principal may not, or when no controller answered.
template <typename Req, typename Resp, typename Serve, typename Refuse>
boost::asio::awaitable<net::Response> on_controller(HandlerContext& ctx, Serve serve, Refuse refuse,
                                                   acl::Operation op = acl::Operation::alter) {
  auto req = ctx.decode<Req>();
  auto& svc = ctx.services;
  if (!authorized_cluster(ctx, op)) {
    Resp resp;
    refuse(req, resp, protocol::ErrorCode::cluster_authorization_failed, "Not authorized to alter the cluster.");
    co_return ctx.respond(resp);
  }
  if (svc.metadata.leads()) {
    auto work = [&svc, &req, serve] { return serve(svc.metadata, req); };
    Resp resp = co_await svc.blocking.run(std::move(work));
    co_await svc.partitions.reconcile(svc.metadata.image());
    co_return ctx.respond(resp);
  }
  protocol::Writer w;
  req.encode(w, ctx.version);
  std::optional<net::Response> forwarded = co_await forward_to_controller(ctx, std::move(w).finish_bytes());
  if (forwarded) co_return std::move(*forwarded);
  Resp resp;
  refuse(req, resp, protocol::ErrorCode::request_timed_out, "no controller answered in time");
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
