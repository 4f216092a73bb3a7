// ListGroups: every group this node coordinates, gathered from all coordinator shards.
// v4+ filters by state (case-insensitive), v5 by type: all groups here are "classic".
#include <algorithm>
#include <cctype>

#include "brokerd/group/group_coordinator.h"
#include "brokerd/protocol/messages/list_groups_request.h"
#include "brokerd/protocol/messages/list_groups_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

bool matches(const std::vector<std::string>& filter, std::string_view value) {
  return filter.empty() || std::any_of(filter.begin(), filter.end(), [&](const auto& f) { return iequals(f, value); });
}

}  // namespace

boost::asio::awaitable<net::Response> handle_list_groups(HandlerContext& ctx) {
  auto req = ctx.decode<protocol::ListGroupsRequest>();
  auto [error, groups] = co_await ctx.services.groups.list();
  protocol::ListGroupsResponse resp;
  resp.error_code = protocol::code(error);
  // DESCRIBE on the cluster lists every group; else only the groups the principal may describe.
  const bool all = authorized_cluster(ctx, acl::Operation::describe);
  if (matches(req.types_filter, "classic")) {
    for (const auto& g : groups) {
      if (!all && !may_see(ctx, acl::ResourceType::group, g.group_id)) continue;
      auto state = group::state_name(g.state);
      if (!matches(req.states_filter, state)) continue;
      protocol::ListGroupsResponse::ListedGroup lg;
      lg.group_id = g.group_id;
      lg.protocol_type = g.protocol_type;
      lg.group_state = std::string(state);
      lg.group_type = "classic";
      resp.groups.push_back(std::move(lg));
    }
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
