// FindCoordinator: this node coordinates every group (a cluster of one). Keys are group ids
// (key type 0); transactional ids (1) and share groups (2) are refused with INVALID_REQUEST,
// as Kafka answers a coordinator type it does not serve. v4+ batches keys.
#include "brokerd/cluster/metadata_store.h"
#include "brokerd/protocol/messages/find_coordinator_request.h"
#include "brokerd/protocol/messages/find_coordinator_response.h"
#include "kafka/handler.h"

namespace brokerd::kafka {
namespace {

using protocol::ErrorCode;
using protocol::FindCoordinatorRequest;
using protocol::FindCoordinatorResponse;

constexpr int8_t kGroupKey = 0;

struct Answer {
  ErrorCode error = ErrorCode::none;
  std::optional<std::string> message;
  int32_t node_id = -1;
  std::string host;
  int32_t port = -1;
};

Answer find(const Services& svc, int8_t key_type) {
  if (key_type != kGroupKey)
    return {ErrorCode::invalid_request, "This broker serves group coordinators only (key type 0)."};
  auto image = svc.metadata.image();
  for (const auto& b : image->brokers)
    if (b.node_id == svc.node_id && !b.fenced) return {ErrorCode::none, std::nullopt, b.node_id, b.host, b.port};
  return {ErrorCode::coordinator_not_available, std::nullopt};
}

}  // namespace

boost::asio::awaitable<net::Response> handle_find_coordinator(HandlerContext& ctx) {
  auto req = ctx.decode<FindCoordinatorRequest>();
  FindCoordinatorResponse resp;
  if (ctx.version < 4) {
    Answer a = find(ctx.services, req.key_type);
    resp.error_code = protocol::code(a.error);
    resp.error_message = a.message;
    resp.node_id = a.node_id;
    resp.host = a.host;
    resp.port = a.port;
  } else {
    for (const auto& key : req.coordinator_keys) {
      Answer a = find(ctx.services, req.key_type);
      FindCoordinatorResponse::Coordinator c;
      c.key = key;
      c.error_code = protocol::code(a.error);
      c.error_message = a.message;
      c.node_id = a.node_id;
      c.host = a.host;
      c.port = a.port;
      resp.coordinators.push_back(std::move(c));
    }
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
