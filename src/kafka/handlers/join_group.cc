// JoinGroup: hands the member to its group's coordinator shard, where the answer waits for
// the rebalance to complete. Protocol metadata passes through untouched.
#include "brokerd/group/group_coordinator.h"
#include "brokerd/protocol/messages/join_group_request.h"
#include "brokerd/protocol/messages/join_group_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {

using protocol::JoinGroupRequest;
using protocol::JoinGroupResponse;

boost::asio::awaitable<net::Response> handle_join_group(HandlerContext& ctx) {
  auto req = ctx.decode<JoinGroupRequest>();
  if (!authorized_group(ctx, acl::Operation::read, req.group_id)) {
    JoinGroupResponse resp;
    resp.error_code = protocol::code(protocol::ErrorCode::group_authorization_failed);
    resp.generation_id = -1;
    co_return ctx.respond(resp);
  }
  group::JoinRequest join;
  join.group_id = std::move(req.group_id);
  join.member_id = std::move(req.member_id);
  join.instance_id = std::move(req.group_instance_id);
  join.client_id = ctx.request.client_id.value_or("");
  join.client_host = ctx.request.connection ? ctx.request.connection->peer : "";
  // Kafka reports the host as "/ip".
  if (auto colon = join.client_host.rfind(':'); colon != std::string::npos) join.client_host.resize(colon);
  join.client_host = "/" + join.client_host;
  join.session_timeout_ms = req.session_timeout_ms;
  join.rebalance_timeout_ms = ctx.version >= 1 ? req.rebalance_timeout_ms : req.session_timeout_ms;
  join.protocol_type = std::move(req.protocol_type);
  for (auto& p : req.protocols) join.protocols.push_back({std::move(p.name), std::move(p.metadata)});
  join.require_known_member_id = ctx.version >= 4;
  join.supports_skip_assignment = ctx.version >= 9;

  auto r = co_await ctx.services.groups.join(std::move(join));

  JoinGroupResponse resp;
  resp.error_code = protocol::code(r.error);
  resp.generation_id = r.generation;
  resp.protocol_type = r.protocol_type;
  resp.protocol_name = r.protocol_name;
  // Before v7 the protocol name is not nullable.
  if (ctx.version < 7 && !resp.protocol_name) resp.protocol_name = "";
  resp.leader = r.leader;
  resp.skip_assignment = r.skip_assignment;
  resp.member_id = r.member_id;
  for (auto& m : r.members) {
    JoinGroupResponse::JoinGroupResponseMember jm;
    jm.member_id = std::move(m.member_id);
    jm.group_instance_id = std::move(m.instance_id);
    jm.metadata = std::move(m.metadata);
    resp.members.push_back(std::move(jm));
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
