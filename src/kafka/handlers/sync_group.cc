// SyncGroup: the leader's assignments reach every member once the group is stable.
#include "brokerd/group/group_coordinator.h"
#include "brokerd/protocol/messages/sync_group_request.h"
#include "brokerd/protocol/messages/sync_group_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {

using protocol::SyncGroupRequest;
using protocol::SyncGroupResponse;

boost::asio::awaitable<net::Response> handle_sync_group(HandlerContext& ctx) {
  auto req = ctx.decode<SyncGroupRequest>();
  if (!authorized_group(ctx, acl::Operation::read, req.group_id)) {
    SyncGroupResponse resp;
    resp.error_code = protocol::code(protocol::ErrorCode::group_authorization_failed);
    co_return ctx.respond(resp);
  }
  group::SyncRequest sync;
  sync.group_id = std::move(req.group_id);
  sync.generation = req.generation_id;
  sync.member_id = std::move(req.member_id);
  sync.instance_id = std::move(req.group_instance_id);
  sync.protocol_type = std::move(req.protocol_type);
  sync.protocol_name = std::move(req.protocol_name);
  for (auto& a : req.assignments) sync.assignments.emplace_back(std::move(a.member_id), std::move(a.assignment));

  auto r = co_await ctx.services.groups.sync(std::move(sync));

  SyncGroupResponse resp;
  resp.error_code = protocol::code(r.error);
  resp.protocol_type = r.protocol_type;
  resp.protocol_name = r.protocol_name;
  resp.assignment = std::move(r.assignment);
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
