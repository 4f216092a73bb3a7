// The ACL APIs: CreateAcls and DeleteAcls change metadata, so the active controller answers
// them (other nodes forward them; both need ALTER on the cluster); DescribeAcls is answered
// by every node from its image (DESCRIBE on the cluster).
#include "brokerd/cluster/acl_requests.h"
#include "kafka/on_controller.h"

namespace brokerd::kafka {

using protocol::ErrorCode;

boost::asio::awaitable<net::Response> handle_create_acls(HandlerContext& ctx) {
  using Req = protocol::CreateAclsRequest;
  using Resp = protocol::CreateAclsResponse;
  return on_controller<Req, Resp>(
      ctx, [](cluster::MetadataStore& m, const Req& r) { return cluster::answer_create_acls(m, r); },
      [](const Req& req, Resp& resp, ErrorCode e, const char* message) {
        for (size_t i = 0; i < req.creations.size(); ++i) {
          auto& r = resp.results.emplace_back();
          r.error_code = protocol::code(e);
          r.error_message = message;
        }
      });
}

boost::asio::awaitable<net::Response> handle_delete_acls(HandlerContext& ctx) {
  using Req = protocol::DeleteAclsRequest;
  using Resp = protocol::DeleteAclsResponse;
  return on_controller<Req, Resp>(
      ctx, [](cluster::MetadataStore& m, const Req& r) { return cluster::answer_delete_acls(m, r); },
      [](const Req& req, Resp& resp, ErrorCode e, const char* message) {
        for (size_t i = 0; i < req.filters.size(); ++i) {
          auto& r = resp.filter_results.emplace_back();
          r.error_code = protocol::code(e);
          r.error_message = message;
        }
      });
}

boost::asio::awaitable<net::Response> handle_describe_acls(HandlerContext& ctx) {
  auto req = ctx.decode<protocol::DescribeAclsRequest>();
  if (!authorized_cluster(ctx, acl::Operation::describe)) {
    protocol::DescribeAclsResponse resp;
    resp.error_code = protocol::code(ErrorCode::cluster_authorization_failed);
    resp.error_message = "Not authorized to describe the cluster's ACLs.";
    co_return ctx.respond(resp);
  }
  co_return ctx.respond(cluster::answer_describe_acls(*ctx.services.metadata.image(), req));
}

}  // namespace brokerd::kafka
