// The ACL APIs: CreateAcls and DeleteAcls change metadata, so the active controller answers
// them (other nodes forward them; both need ALTER on the cluster); DescribeAcls is answered
// by every node from its image (DESCRIBE on the cluster). Without an authorizer every API
// answers SECURITY_DISABLED, as Kafka does: bindings that nothing enforces would only
// mislead an operator into thinking a resource is protected.
#include "brokerd/metadata/acl_requests.h"
#include "brokerd/security/authorization.h"
#include "kafka/on_controller.h"

namespace brokerd::kafka {

using protocol::ErrorCode;

namespace {

constexpr const char* kNoAuthorizer = "No Authorizer is configured.";

bool authorizer_configured(const HandlerContext& ctx) { return ctx.services.authorization.enabled; }

}  // namespace

boost::asio::awaitable<net::Response> handle_create_acls(HandlerContext& ctx) {
  using Req = protocol::CreateAclsRequest;
  using Resp = protocol::CreateAclsResponse;
  auto refuse = [](const Req& req, Resp& resp, ErrorCode e, const char* message) {
    for (size_t i = 0; i < req.creations.size(); ++i) {
      auto& r = resp.results.emplace_back();
      r.error_code = protocol::code(e);
      r.error_message = message;
    }
  };
  if (!authorizer_configured(ctx)) {
    Resp resp;
    refuse(ctx.decode<Req>(), resp, ErrorCode::security_disabled, kNoAuthorizer);
    co_return ctx.respond(resp);
  }
  co_return co_await on_controller<Req, Resp>(
      ctx, [](metadata::MetadataStore& m, const Req& r) { return metadata::answer_create_acls(m, r); }, refuse);
}

boost::asio::awaitable<net::Response> handle_delete_acls(HandlerContext& ctx) {
  using Req = protocol::DeleteAclsRequest;
  using Resp = protocol::DeleteAclsResponse;
  auto refuse = [](const Req& req, Resp& resp, ErrorCode e, const char* message) {
    for (size_t i = 0; i < req.filters.size(); ++i) {
      auto& r = resp.filter_results.emplace_back();
      r.error_code = protocol::code(e);
      r.error_message = message;
    }
  };
  if (!authorizer_configured(ctx)) {
    Resp resp;
    refuse(ctx.decode<Req>(), resp, ErrorCode::security_disabled, kNoAuthorizer);
    co_return ctx.respond(resp);
  }
  co_return co_await on_controller<Req, Resp>(
      ctx, [](metadata::MetadataStore& m, const Req& r) { return metadata::answer_delete_acls(m, r); }, refuse);
}

boost::asio::awaitable<net::Response> handle_describe_acls(HandlerContext& ctx) {
  auto req = ctx.decode<protocol::DescribeAclsRequest>();
  if (!authorizer_configured(ctx)) {
    protocol::DescribeAclsResponse resp;
    resp.error_code = protocol::code(ErrorCode::security_disabled);
    resp.error_message = kNoAuthorizer;
    co_return ctx.respond(resp);
  }
  if (!authorized_cluster(ctx, acl::Operation::describe)) {
    protocol::DescribeAclsResponse resp;
    resp.error_code = protocol::code(ErrorCode::cluster_authorization_failed);
    resp.error_message = "Not authorized to describe the cluster's ACLs.";
    co_return ctx.respond(resp);
  }
  co_return ctx.respond(metadata::answer_describe_acls(*ctx.services.metadata.image(), req));
}

}  // namespace brokerd::kafka
