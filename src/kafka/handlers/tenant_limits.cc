// The tenant-limit APIs (brokerd's own): AlterTenantLimits changes metadata, so the active
// controller answers it (other nodes forward it; ALTER_CONFIGS on the cluster, as client
// quotas need); DescribeTenantLimits is answered by every node from its image
// (DESCRIBE_CONFIGS on the cluster).
#include "brokerd/metadata/tenant_limit_requests.h"
#include "kafka/on_controller.h"

namespace brokerd::kafka {

boost::asio::awaitable<net::Response> handle_alter_tenant_limits(HandlerContext& ctx) {
  using Req = protocol::AlterTenantLimitsRequest;
  using Resp = protocol::AlterTenantLimitsResponse;
  return on_controller<Req, Resp>(
      ctx, [](metadata::MetadataStore& m, const Req& r) { return metadata::answer_alter_tenant_limits(m, r); },
      [](const Req& req, Resp& resp, protocol::ErrorCode e, const char* message) {
        for (const auto& entry : req.entries) {
          auto& r = resp.entries.emplace_back();
          r.principal = entry.principal;
          r.pattern_type = entry.pattern_type;
          r.error_code = protocol::code(e);
          r.error_message = message;
        }
      },
      acl::Operation::alter_configs);
}

boost::asio::awaitable<net::Response> handle_describe_tenant_limits(HandlerContext& ctx) {
  auto req = ctx.decode<protocol::DescribeTenantLimitsRequest>();
  if (!authorized_cluster(ctx, acl::Operation::describe_configs)) {
    protocol::DescribeTenantLimitsResponse resp;
    resp.error_code = protocol::code(protocol::ErrorCode::cluster_authorization_failed);
    resp.error_message = "Not authorized to describe the cluster's configs.";
    co_return ctx.respond(resp);
  }
  co_return ctx.respond(metadata::answer_describe_tenant_limits(*ctx.services.metadata.image(), req));
}

}  // namespace brokerd::kafka
