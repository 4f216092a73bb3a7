#include "kafka/handlers/increments_here.h"

#include <fmt/format.h>

#include <algorithm>

#include "brokerd/common/logger.h"
#include "brokerd/config/properties.h"
#include "brokerd/metadata/config_requests.h"
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/partitions/partition_manager.h"
#include "kafka/handler.h"

namespace brokerd::kafka {

boost::asio::awaitable<bool> controller_takes_increments(HandlerContext& ctx) {
  auto* channel = ctx.services.metadata.channel();
  if (!channel) co_return true;
  co_return co_await ctx.services.blocking.run(
      [channel] { return channel->leader_serves(metadata::kIncrementalAlterConfigs); });
}

boost::asio::awaitable<ConfigResult> apply_increments_here(
    Services& svc, const protocol::IncrementalAlterConfigsRequest::AlterConfigsResource& res, bool validate_only) {
  module_logger("kafka")->warn("IncrementalAlterConfigs of {} '{}' applied on this node and written whole: the controller "
                               "(an older release) does not take it, and a change made at the same time through another "
                               "broker may be lost until the controller is upgraded",
                               resource_type_name(res.resource_type), res.resource_name);
  auto image = svc.metadata.image();
  if (res.resource_type == resource_type::broker) {
    auto layer = image->broker_configs->find(res.resource_name);
    auto configs = layer == image->broker_configs->end() ? std::map<std::string, std::string>{} : layer->second;
    auto in_force = [&](const std::string& name) {
      return config::find_broker_property(name) ? broker_setting(svc, name) : std::string();
    };
    if (auto refused = metadata::apply_config_ops(res, configs, true, in_force))
      co_return ConfigResult{refused->error, refused->message};
    co_return co_await write_broker_configs(svc, res.resource_name, std::move(configs), validate_only);
  }
  const auto* topic = image->topic(res.resource_name);
  if (!topic)
    co_return ConfigResult{protocol::ErrorCode::unknown_topic_or_partition,
                           fmt::format("The topic '{}' does not exist.", res.resource_name)};
  const auto defaults = svc.partitions.topic_defaults();
  auto in_force = [&](const std::string& name) {
    auto it = defaults.find(name);
    return it != defaults.end() ? it->second : std::string(config::find_topic_property(name)->default_value);
  };
  auto configs = topic->configs;
  if (auto refused = metadata::apply_config_ops(res, configs, false, in_force))
    co_return ConfigResult{refused->error, refused->message};
  co_return co_await write_topic_configs(svc, res.resource_name, std::move(configs), validate_only);
}

}  // namespace brokerd::kafka
