#pragma once
// The HTTP API speaks to the node as a Kafka client would: each call is a Kafka request, run
// by this node's own dispatcher as the HTTP connection's principal (so ACLs, quotas and tenant
// limits apply exactly as for Kafka clients), or sent to the node that must answer it
// (NodeLinks) once this node has authorized it.
#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <optional>

#include "brokerd/common/bytes.h"
#include "brokerd/protocol/framing.h"
#include "brokerd/protocol/wire.h"

namespace brokerd::net {
class Dispatcher;
struct ConnectionContext;
}  // namespace brokerd::net

namespace brokerd::http {

class NodeLinks;

class KafkaCalls {
 public:
  KafkaCalls(net::Dispatcher& local, NodeLinks& links) : local_(local), links_(links) {}

  // Runs the request here; the response body (after its header), in the buffer of the whole
  // response. Throws protocol::DecodeError or std::runtime_error when the dispatcher refused it
  // (which a route never sends).
  boost::asio::awaitable<SharedBytes> here(net::ConnectionContext& connection, int16_t api_key, int16_t version,
                                           Bytes body);
  // Sends it to `node`; nullopt when the node did not answer within timeout_ms.
  boost::asio::awaitable<std::optional<Bytes>> at(int32_t node, int16_t api_key, int16_t version, Bytes body,
                                                  int64_t timeout_ms);

  template <typename Resp, typename Req>
  boost::asio::awaitable<Resp> here(net::ConnectionContext& connection, const Req& req, int16_t version) {
    SharedBytes body = co_await here(connection, Req::api_key, version, protocol::encode_body(req, version));
    co_return decode<Resp>(body, version);
  }
  template <typename Resp, typename Req>
  boost::asio::awaitable<std::optional<Resp>> at(int32_t node, const Req& req, int16_t version, int64_t timeout_ms) {
    auto body = co_await at(node, Req::api_key, version, protocol::encode_body(req, version), timeout_ms);
    if (!body) co_return std::nullopt;
    auto owned = std::make_shared<Bytes>(std::move(*body));
    co_return decode<Resp>(SharedBytes{owned, std::span<const std::byte>(owned->data(), owned->size())}, version);
  }

  // Records in the response stay views of `body`'s buffer.
  template <typename Resp>
  static Resp decode(const SharedBytes& body, int16_t version) {
    protocol::Reader r(body.data, body.owner);
    Resp resp;
    resp.decode(r, version);
    return resp;
  }

 private:
  net::Dispatcher& local_;
  NodeLinks& links_;
};

}  // namespace brokerd::http
