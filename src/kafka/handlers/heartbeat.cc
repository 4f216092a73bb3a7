// Heartbeat: keeps a member's session alive and tells it when a rebalance has begun.
#include "brokerd/group/group_coordinator.h"
#include "brokerd/protocol/messages/heartbeat_request.h"
#include "brokerd/protocol/messages/heartbeat_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {

boost::asio::awaitable<net::Response> handle_heartbeat(HandlerContext& ctx) {
  auto req = ctx.decode<protocol::HeartbeatRequest>();
  if (!authorized_group(ctx, acl::Operation::read, req.group_id)) {
    protocol::HeartbeatResponse resp;
    resp.error_code = protocol::code(protocol::ErrorCode::group_authorization_failed);
    co_return ctx.respond(resp);
  }
  auto e = co_await ctx.services.groups.heartbeat(std::move(req.group_id), std::move(req.member_id),
                                                  std::move(req.group_instance_id), req.generation_id);
  protocol::HeartbeatResponse resp;
  resp.error_code = protocol::code(e);
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
