// ElectLeaders (API 43): preferred or unclean leader elections an operator asks for. The node
// leading the metadata quorum elects and commits them itself; any other node sends the
// request to the controller's listener and returns its answer unchanged, once its own image
// holds the elections.
#include "brokerd/metadata/elect_leaders_request.h"
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/net/blocking_pool.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {

boost::asio::awaitable<net::Response> handle_elect_leaders(HandlerContext& ctx) {
  auto req = ctx.decode<protocol::ElectLeadersRequest>();
  if (!authorized_cluster(ctx, acl::Operation::alter)) {
    protocol::ElectLeadersResponse refused;
    refused.error_code = protocol::code(protocol::ErrorCode::cluster_authorization_failed);
    co_return ctx.respond(refused);
  }
  auto& svc = ctx.services;
  const int16_t version = ctx.version;
  if (svc.metadata.leads()) {
    auto serve = [&svc, &req, version] { return metadata::answer_elect_leaders(svc.metadata, req, version); };
    auto resp = co_await svc.blocking.run(std::move(serve));
    co_await svc.partitions.reconcile(svc.metadata.image());  // this node's leaderships move at once
    co_return ctx.respond(resp);
  }
  protocol::Writer w;
  req.encode(w, version);
  std::optional<net::Response> forwarded = co_await forward_to_controller(ctx, std::move(w).finish_bytes());
  if (forwarded) co_return std::move(*forwarded);
  protocol::ElectLeadersResponse resp;
  resp.error_code = protocol::code(protocol::ErrorCode::request_timed_out);
  if (req.topic_partitions) {
    for (const auto& t : *req.topic_partitions) {
      auto& r = resp.replica_election_results.emplace_back();
      r.topic = t.topic;
      for (int32_t p : t.partitions) {
        auto& pr = r.partition_result.emplace_back();
        pr.partition_id = p;
        pr.error_code = protocol::code(protocol::ErrorCode::request_timed_out);
        pr.error_message = "no controller answered in time";
      }
    }
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
