#include "brokerd/metadata/controller_channel.h"
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/net/blocking_pool.h"
#include "kafka/handler.h"

namespace brokerd::kafka {

boost::asio::awaitable<std::optional<Bytes>> forward_body_to_controller(HandlerContext& ctx, Bytes body) {
  // Named variables, not temporaries of the co_await expression (GCC 12 destroys those twice).
  auto* channel = ctx.services.metadata.channel();
  auto shared = std::make_shared<const Bytes>(std::move(body));
  const int16_t api_key = ctx.request.api_key, version = ctx.version;
  auto forward = [channel, shared, api_key, version]() -> std::optional<Bytes> {
    if (!channel) return std::nullopt;
    return channel->forward(api_key, version, *shared);
  };
  std::optional<Bytes> answer = co_await ctx.services.blocking.run(std::move(forward));
  co_return answer;
}

boost::asio::awaitable<std::optional<net::Response>> forward_to_controller(HandlerContext& ctx, Bytes body) {
  std::optional<Bytes> answer = co_await forward_body_to_controller(ctx, std::move(body));
  if (!answer) co_return std::nullopt;
  protocol::Writer out;
  protocol::encode_response_header(out, ctx.request.api_key, ctx.version, ctx.request.correlation_id);
  out.raw(*answer);
  co_return net::Response{std::move(out).finish()};
}

}  // namespace brokerd::kafka
