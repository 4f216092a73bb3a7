// DescribeQuorum on a broker listener, as Kafka brokers answer it, so tools can ask any
// node: a node that leads the metadata quorum describes it itself; any other node sends the
// request to the leader's controller listener and returns its answer unchanged.
#include "brokerd/metadata/controller_channel.h"
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/protocol/messages/describe_quorum_request.h"
#include "brokerd/protocol/messages/describe_quorum_response.h"
#include "brokerd/quorum/kraft_codec.h"
#include "brokerd/quorum/quorum_driver.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {
namespace {

constexpr int16_t kDescribeQuorum = 55;

net::Response raw_response(const HandlerContext& ctx, const Bytes& body) {
  protocol::Writer w;
  protocol::encode_response_header(w, ctx.request.api_key, ctx.version, ctx.request.correlation_id);
  w.raw(body);
  return net::Response{std::move(w).finish()};
}

}  // namespace

boost::asio::awaitable<net::Response> handle_describe_quorum(HandlerContext& ctx) {
  auto req = ctx.decode<protocol::DescribeQuorumRequest>();
  if (!authorized_cluster(ctx, acl::Operation::describe)) {
    protocol::DescribeQuorumResponse refused;
    refused.error_code = protocol::code(protocol::ErrorCode::cluster_authorization_failed);
    co_return ctx.respond(refused);
  }
  auto& svc = ctx.services;
  if (svc.quorum.status().role == raft::Role::leader) {
    auto q = co_await svc.quorum.describe();
    co_return raw_response(ctx, quorum::encode_describe_quorum(ctx.version, q, svc.quorum.options().voters));
  }
  // The callable is a named variable, not a temporary of the co_await expression: GCC 12
  // destroys such a temporary's captures twice (AddressSanitizer caught it as a double free).
  auto* channel = svc.metadata.channel();
  protocol::Writer w;
  req.encode(w, ctx.version);
  auto body = std::make_shared<const Bytes>(std::move(w).finish_bytes());
  const int16_t version = ctx.version;
  auto forward = [channel, body, version]() -> std::optional<Bytes> {
    if (!channel) return std::nullopt;
    return channel->forward(kDescribeQuorum, version, *body);
  };
  std::optional<Bytes> answer = co_await svc.blocking.run(std::move(forward));
  if (answer) co_return raw_response(ctx, *answer);
  protocol::DescribeQuorumResponse resp;
  resp.error_code = protocol::code(protocol::ErrorCode::not_leader_or_follower);
  if (ctx.version >= 1) resp.error_message = "no leader of the metadata quorum answered";
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
