// The client quota APIs (KIP-546): AlterClientQuotas changes metadata, so the active
// controller answers it (other nodes forward it; ALTER_CONFIGS on the cluster);
// DescribeClientQuotas is answered by every node from its image (DESCRIBE_CONFIGS).
#include "brokerd/metadata/client_quota_requests.h"
#include "kafka/on_controller.h"

namespace brokerd::kafka {

boost::asio::awaitable<net::Response> handle_alter_client_quotas(HandlerContext& ctx) {
  using Req = protocol::AlterClientQuotasRequest;
  using Resp = protocol::AlterClientQuotasResponse;
  return on_controller<Req, Resp>(
      ctx, [](metadata::MetadataStore& m, const Req& r) { return metadata::answer_alter_client_quotas(m, r); },
      [](const Req& req, Resp& resp, protocol::ErrorCode e, const char* message) {
        for (const auto& entry : req.entries) {
          auto& r = resp.entries.emplace_back();
          r.error_code = protocol::code(e);
          r.error_message = message;
          quota::put_entity(quota::entity_of(entry.entity), r.entity);
        }
      },
      acl::Operation::alter_configs);
}

boost::asio::awaitable<net::Response> handle_describe_client_quotas(HandlerContext& ctx) {
  auto req = ctx.decode<protocol::DescribeClientQuotasRequest>();
  if (!authorized_cluster(ctx, acl::Operation::describe_configs)) {
    protocol::DescribeClientQuotasResponse resp;
    resp.error_code = protocol::code(protocol::ErrorCode::cluster_authorization_failed);
    resp.error_message = "Not authorized to describe the cluster's configs.";
    resp.entries = std::nullopt;
    co_return ctx.respond(resp);
  }
  co_return ctx.respond(metadata::answer_describe_client_quotas(*ctx.services.metadata.image(), req));
}

}  // namespace brokerd::kafka
