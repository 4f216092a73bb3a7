// AlterConfigs (legacy): replaces a topic's whole set of overrides, or a broker resource's
// whole set of dynamic configs, with the request's.
#include <fmt/format.h>

#include <map>

#include "brokerd/protocol/messages/alter_configs_request.h"
#include "brokerd/protocol/messages/alter_configs_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"
#include "kafka/handlers/config_resources.h"

namespace brokerd::kafka {
namespace {

using protocol::AlterConfigsRequest;
using protocol::AlterConfigsResponse;
using protocol::ErrorCode;

}  // namespace

boost::asio::awaitable<net::Response> handle_alter_configs(HandlerContext& ctx) {
  auto req = ctx.decode<AlterConfigsRequest>();
  auto& svc = ctx.services;

  // A resource named twice is refused in every place it appears (as Kafka does).
  std::map<std::pair<int8_t, std::string>, int> seen;
  for (const auto& res : req.resources) ++seen[{res.resource_type, res.resource_name}];

  AlterConfigsResponse resp;
  for (const auto& res : req.resources) {
    ConfigResult result;
    if (seen[{res.resource_type, res.resource_name}] > 1) {
      result = {ErrorCode::invalid_request, "Each resource must appear at most once."};
    } else if (auto e = config_access(ctx, res.resource_type, res.resource_name, acl::Operation::alter_configs);
               e != ErrorCode::none) {
      result = {e, "Not authorized to alter these configs."};
    } else if (auto unsupported = unsupported_alter_resource(res.resource_type)) {
      result = *unsupported;
    } else if (auto bad = res.resource_type == resource_type::broker
                              ? check_broker_resource_name(res.resource_name, svc.node_id)
                              : std::nullopt) {
      result = {ErrorCode::invalid_request, *bad};
    } else {
      std::map<std::string, std::string> values;
      for (const auto& c : res.configs) {
        if (!c.value) {
          result = {ErrorCode::invalid_request, fmt::format("Null value not supported for : {}", c.name)};
          break;
        }
        values[c.name] = *c.value;  // a repeated name: the last one wins
      }
      const bool ok = result.error == ErrorCode::none;
      if (ok && res.resource_type == resource_type::broker)
        result = co_await write_broker_configs(svc, res.resource_name, std::move(values), req.validate_only);
      else if (ok)
        result = co_await write_topic_configs(svc, res.resource_name, std::move(values), req.validate_only);
    }
    AlterConfigsResponse::AlterConfigsResourceResponse out;
    out.error_code = protocol::code(result.error);
    out.error_message = result.error == ErrorCode::none ? std::nullopt : std::optional<std::string>(result.message);
    out.resource_type = res.resource_type;
    out.resource_name = res.resource_name;
    resp.responses.push_back(std::move(out));
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
