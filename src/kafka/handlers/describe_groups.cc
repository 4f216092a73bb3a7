// DescribeGroups: state, protocol and members of each group; a group this node does not know
// is described as Dead before v6, and answered GROUP_ID_NOT_FOUND from v6 on (KIP-1043).
#include "brokerd/group/group_coordinator.h"
#include "brokerd/protocol/messages/describe_groups_request.h"
#include "brokerd/protocol/messages/describe_groups_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {

boost::asio::awaitable<net::Response> handle_describe_groups(HandlerContext& ctx) {
  auto req = ctx.decode<protocol::DescribeGroupsRequest>();
  protocol::DescribeGroupsResponse resp;
  for (auto& id : req.groups) {
    if (!authorized_group(ctx, acl::Operation::describe, id)) {
      protocol::DescribeGroupsResponse::DescribedGroup dg;
      dg.group_id = id;
      dg.error_code = protocol::code(protocol::ErrorCode::group_authorization_failed);
      resp.groups.push_back(std::move(dg));
      continue;
    }
    auto d = co_await ctx.services.groups.describe(id);
    protocol::DescribeGroupsResponse::DescribedGroup dg;
    dg.error_code = protocol::code(d.error);
    dg.group_id = id;
    dg.group_state = std::string(group::state_name(d.state));
    if (ctx.version >= 6 && d.error == protocol::ErrorCode::none && d.state == group::GroupState::dead) {
      dg.error_code = protocol::code(protocol::ErrorCode::group_id_not_found);
      dg.error_message = "Group " + id + " not found.";
    }
    dg.protocol_type = d.protocol_type;
    dg.protocol_data = d.protocol_name;
    for (auto& m : d.members) {
      protocol::DescribeGroupsResponse::DescribedGroupMember dm;
      dm.member_id = std::move(m.member_id);
      dm.group_instance_id = std::move(m.instance_id);
      dm.client_id = std::move(m.client_id);
      dm.client_host = std::move(m.client_host);
      dm.member_metadata = std::move(m.metadata);
      dm.member_assignment = std::move(m.assignment);
      dg.members.push_back(std::move(dm));
    }
    if (req.include_authorized_operations)
      dg.authorized_operations = authorized_operations(ctx, acl::ResourceType::group, id);
    resp.groups.push_back(std::move(dg));
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
