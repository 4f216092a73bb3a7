// DescribeConfigs: every topic property of a topic with its effective value and where it
// comes from, every property of this broker, or the cluster's dynamic broker defaults;
// filtered by the requested keys.
#include <fmt/format.h>

#include <algorithm>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/config/broker_config.h"
#include "brokerd/protocol/messages/describe_configs_request.h"
#include "brokerd/protocol/messages/describe_configs_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"
#include "kafka/handlers/config_resources.h"

namespace brokerd::kafka {
namespace {

using protocol::DescribeConfigsRequest;
using protocol::DescribeConfigsResponse;
using protocol::ErrorCode;

// Fields outside the answered version must keep their schema defaults.
DescribeConfigsResponse::DescribeConfigsResourceResult to_result(const ConfigEntry& e, const DescribeConfigsRequest& req,
                                                                 int16_t version) {
  DescribeConfigsResponse::DescribeConfigsResourceResult r;
  r.name = e.name;
  r.value = e.sensitive || e.null_value ? std::nullopt : std::optional<std::string>(e.value);
  r.read_only = e.read_only;
  r.config_source = e.source;
  r.is_sensitive = e.sensitive;
  if (req.include_synonyms) {
    for (const auto& s : e.synonyms) {
      DescribeConfigsResponse::DescribeConfigsSynonym syn;
      syn.name = s.name;
      syn.value = e.sensitive ? std::nullopt : std::optional<std::string>(s.value);
      syn.source = s.source;
      r.synonyms.push_back(std::move(syn));
    }
  }
  if (version >= 3) {
    r.config_type = e.type;
    r.documentation = req.include_documentation && !e.doc.empty() ? std::optional<std::string>(e.doc) : std::nullopt;
  }
  return r;
}

bool wanted(const DescribeConfigsRequest::DescribeConfigsResource& res, const std::string& name) {
  if (!res.configuration_keys || res.configuration_keys->empty()) return true;
  const auto& keys = *res.configuration_keys;
  return std::find(keys.begin(), keys.end(), name) != keys.end();
}

}  // namespace

boost::asio::awaitable<net::Response> handle_describe_configs(HandlerContext& ctx) {
  auto req = ctx.decode<DescribeConfigsRequest>();
  auto& svc = ctx.services;
  auto image = svc.metadata.image();
  const BrokerSettings broker{svc.config, *image->broker_configs, svc.node_id};

  DescribeConfigsResponse resp;
  for (const auto& res : req.resources) {
    DescribeConfigsResponse::DescribeConfigsResult out;
    out.resource_type = res.resource_type;
    out.resource_name = res.resource_name;
    out.error_message = std::nullopt;
    auto fail = [&](ErrorCode e, std::string message) {
      out.error_code = protocol::code(e);
      out.error_message = std::move(message);
    };

    std::vector<ConfigEntry> entries;
    if (auto e = config_access(ctx, res.resource_type, res.resource_name, acl::Operation::describe_configs);
        e != ErrorCode::none) {
      fail(e, "Not authorized to describe these configs.");
    } else if (res.resource_type == resource_type::topic) {
      if (!metadata::valid_topic_name(res.resource_name)) {
        fail(ErrorCode::invalid_topic_exception, fmt::format("Topic name '{}' is illegal.", res.resource_name));
      } else if (const auto* t = image->topic(res.resource_name)) {
        entries = topic_config_entries(broker, svc.partitions.topic_defaults(), t->configs);
      } else {
        fail(ErrorCode::unknown_topic_or_partition, fmt::format("The topic '{}' does not exist.", res.resource_name));
      }
    } else if (res.resource_type == resource_type::broker) {
      if (auto bad = check_broker_resource_name(res.resource_name, svc.node_id)) {
        fail(ErrorCode::invalid_request, *bad);
      } else if (res.resource_name.empty()) {
        entries = dynamic_default_entries(broker);  // the cluster-wide dynamic defaults
      } else {
        entries = broker_config_entries(broker);
      }
    } else {
      fail(ErrorCode::invalid_request, fmt::format("Unsupported resource type: {}", resource_type_name(res.resource_type)));
    }

    for (const auto& e : entries)
      if (wanted(res, e.name)) out.configs.push_back(to_result(e, req, ctx.version));
    resp.results.push_back(std::move(out));
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
