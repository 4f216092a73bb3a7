// DeleteGroups: an empty group is removed and tombstones for its offsets and metadata are
// written; a group with members is refused with NON_EMPTY_GROUP.
#include "brokerd/group/group_coordinator.h"
#include "brokerd/protocol/messages/delete_groups_request.h"
#include "brokerd/protocol/messages/delete_groups_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {

boost::asio::awaitable<net::Response> handle_delete_groups(HandlerContext& ctx) {
  auto req = ctx.decode<protocol::DeleteGroupsRequest>();
  protocol::DeleteGroupsResponse resp;
  for (auto& id : req.groups_names) {
    auto e = authorized_group(ctx, acl::Operation::remove, id) ? co_await ctx.services.groups.delete_group(id)
                                                                : protocol::ErrorCode::group_authorization_failed;
    protocol::DeleteGroupsResponse::DeletableGroupResult r;
    r.group_id = id;
    r.error_code = protocol::code(e);
    resp.results.push_back(std::move(r));
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
