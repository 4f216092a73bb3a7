// The SCRAM credential APIs (KIP-554): AlterUserScramCredentials changes metadata, so the
// active controller answers it (other nodes forward it); DescribeUserScramCredentials is
// answered by every node from its metadata image. Neither returns a salt or a key.
#include "brokerd/metadata/scram_credential_requests.h"
#include "kafka/on_controller.h"

namespace brokerd::kafka {

boost::asio::awaitable<net::Response> handle_alter_user_scram_credentials(HandlerContext& ctx) {
  using Req = protocol::AlterUserScramCredentialsRequest;
  using Resp = protocol::AlterUserScramCredentialsResponse;
  return on_controller<Req, Resp>(
      ctx, [](metadata::MetadataStore& m, const Req& r) { return metadata::answer_alter_user_scram_credentials(m, r); },
      [](const Req& req, Resp& resp, protocol::ErrorCode e, const char* message) {
        auto refuse = [&](const std::string& user) {
          for (const auto& r : resp.results)
            if (r.user == user) return;
          auto& r = resp.results.emplace_back();
          r.user = user;
          r.error_code = protocol::code(e);
          r.error_message = message;
        };
        for (const auto& d : req.deletions) refuse(d.name);
        for (const auto& u : req.upsertions) refuse(u.name);
      });
}

boost::asio::awaitable<net::Response> handle_describe_user_scram_credentials(HandlerContext& ctx) {
  auto req = ctx.decode<protocol::DescribeUserScramCredentialsRequest>();
  if (!authorized_cluster(ctx, acl::Operation::describe)) {
    protocol::DescribeUserScramCredentialsResponse resp;
    resp.error_code = protocol::code(protocol::ErrorCode::cluster_authorization_failed);
    co_return ctx.respond(resp);
  }
  co_return ctx.respond(metadata::answer_describe_user_scram_credentials(*ctx.services.metadata.image(), req));
}

}  // namespace brokerd::kafka
