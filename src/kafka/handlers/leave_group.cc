// LeaveGroup: one member (v0-2) or a batch of members, by id or group.instance.id (v3+).
#include "brokerd/group/group_coordinator.h"
#include "brokerd/protocol/messages/leave_group_request.h"
#include "brokerd/protocol/messages/leave_group_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {

using protocol::LeaveGroupRequest;
using protocol::LeaveGroupResponse;

boost::asio::awaitable<net::Response> handle_leave_group(HandlerContext& ctx) {
  auto req = ctx.decode<LeaveGroupRequest>();
  if (!authorized_group(ctx, acl::Operation::read, req.group_id)) {
    LeaveGroupResponse resp;
    resp.error_code = protocol::code(protocol::ErrorCode::group_authorization_failed);
    co_return ctx.respond(resp);
  }
  std::vector<group::LeaveMember> members;
  if (ctx.version < 3) {
    members.push_back({req.member_id, std::nullopt});
  } else {
    for (const auto& m : req.members) members.push_back({m.member_id, m.group_instance_id});
  }
  auto r = co_await ctx.services.groups.leave(std::move(req.group_id), members);

  LeaveGroupResponse resp;
  resp.error_code = protocol::code(r.error);
  if (ctx.version < 3) {
    if (r.error == protocol::ErrorCode::none && !r.members.empty()) resp.error_code = protocol::code(r.members[0]);
  } else if (r.error == protocol::ErrorCode::none) {
    for (size_t i = 0; i < members.size(); ++i) {
      LeaveGroupResponse::MemberResponse mr;
      mr.member_id = members[i].member_id;
      mr.group_instance_id = members[i].instance_id;
      mr.error_code = protocol::code(r.members[i]);
      resp.members.push_back(std::move(mr));
    }
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
