// IncrementalAlterConfigs: SET, DELETE, APPEND and SUBTRACT on a topic's overrides or on a
// broker resource's dynamic configs. This broker checks what Kafka's brokers check (each
// resource named once, the principal's right to alter it, its type, keys named once, a
// broker resource naming this broker or the cluster) and answers those it refuses itself.
// The active controller applies the operations of the others to the configs as its image
// holds them (metadata/config_requests.h), so that concurrent changes of different keys of
// one resource through different brokers all stay: this node when it leads the metadata
// quorum, else the controller it forwards them to (answered once this node's image holds
// the change). A controller of an older release does not take them: increments_here.h.
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "brokerd/metadata/config_requests.h"
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/protocol/messages/incremental_alter_configs_request.h"
#include "brokerd/protocol/messages/incremental_alter_configs_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"
#include "kafka/handlers/config_resources.h"
#include "kafka/handlers/increments_here.h"

namespace brokerd::kafka {
namespace {

using protocol::ErrorCode;
using protocol::IncrementalAlterConfigsRequest;
using protocol::IncrementalAlterConfigsResponse;
using Resource = IncrementalAlterConfigsRequest::AlterConfigsResource;
using Answer = IncrementalAlterConfigsResponse::AlterConfigsResourceResponse;

Answer answer_of(const Resource& res, const ConfigResult& result) {
  Answer out;
  out.error_code = protocol::code(result.error);
  out.error_message = result.error == ErrorCode::none ? std::nullopt : std::optional<std::string>(result.message);
  out.resource_type = res.resource_type;
  out.resource_name = res.resource_name;
  return out;
}

// The broker's own refusal of `res`, or nullopt when the controller is to apply it.
std::optional<ConfigResult> refuse_here(HandlerContext& ctx, const Resource& res, int named) {
  if (named > 1) return ConfigResult{ErrorCode::invalid_request, "Each resource must appear at most once."};
  if (auto e = config_access(ctx, res.resource_type, res.resource_name, acl::Operation::alter_configs);
      e != ErrorCode::none)
    return ConfigResult{e, "Not authorized to alter these configs."};
  if (auto unsupported = unsupported_alter_resource(res.resource_type)) return unsupported;
  if (auto duplicate = metadata::check_config_keys(res)) return ConfigResult{duplicate->error, duplicate->message};
  if (res.resource_type == resource_type::broker)
    if (auto bad = check_broker_resource_name(res.resource_name, ctx.services.node_id))
      return ConfigResult{ErrorCode::invalid_request, *bad};
  return std::nullopt;
}

// The controller's answers to `sent`, one per resource in order; a timeout's (or a malformed
// answer's) error for each when there is none.
boost::asio::awaitable<std::vector<Answer>> apply_on_controller(HandlerContext& ctx, const IncrementalAlterConfigsRequest& sent) {
  auto& svc = ctx.services;
  auto all = [&sent](ErrorCode e, const char* message) {
    std::vector<Answer> out;
    for (const auto& res : sent.resources) out.push_back(answer_of(res, {e, message}));
    return out;
  };
  if (svc.metadata.leads()) {
    auto work = [&svc, &sent] { return metadata::answer_incremental_alter_configs(svc.metadata, sent, svc.config); };
    IncrementalAlterConfigsResponse resp = co_await svc.blocking.run(std::move(work));
    co_await svc.partitions.reconcile(svc.metadata.image());
    co_return std::move(resp.responses);
  }
  if (!co_await controller_takes_increments(ctx)) {
    std::vector<Answer> out;
    for (const auto& res : sent.resources) {
      ConfigResult result = co_await apply_increments_here(svc, res, sent.validate_only);
      out.push_back(answer_of(res, result));
    }
    co_return out;
  }
  protocol::Writer w;
  sent.encode(w, ctx.version);
  std::optional<Bytes> body = co_await forward_body_to_controller(ctx, std::move(w).finish_bytes());
  if (!body) co_return all(ErrorCode::request_timed_out, "no controller answered in time");
  IncrementalAlterConfigsResponse resp;
  try {
    protocol::Reader r(*body);
    resp.decode(r, ctx.version);
  } catch (const protocol::DecodeError&) {
    co_return all(ErrorCode::unknown_server_error, "the controller's answer did not decode");
  }
  if (resp.responses.size() != sent.resources.size())
    co_return all(ErrorCode::unknown_server_error, "the controller did not answer every resource");
  // This node's image holds the change: its partitions follow it before the client hears.
  co_await svc.partitions.reconcile(svc.metadata.image());
  co_return std::move(resp.responses);
}

}  // namespace

boost::asio::awaitable<net::Response> handle_incremental_alter_configs(HandlerContext& ctx) {
  auto req = ctx.decode<IncrementalAlterConfigsRequest>();

  std::map<std::pair<int8_t, std::string>, int> named;
  for (const auto& res : req.resources) ++named[{res.resource_type, res.resource_name}];

  // The answers in the request's order; the slots left empty are the controller's.
  std::vector<std::optional<Answer>> answers;
  IncrementalAlterConfigsRequest sent;
  sent.validate_only = req.validate_only;
  for (const auto& res : req.resources) {
    if (auto refused = refuse_here(ctx, res, named[{res.resource_type, res.resource_name}])) {
      answers.emplace_back(answer_of(res, *refused));
    } else {
      answers.emplace_back();
      sent.resources.push_back(res);
    }
  }
  std::vector<Answer> applied;
  if (!sent.resources.empty()) applied = co_await apply_on_controller(ctx, sent);

  IncrementalAlterConfigsResponse resp;
  size_t next = 0;
  for (auto& a : answers) resp.responses.push_back(a ? std::move(*a) : std::move(applied[next++]));
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
