// ListConfigResources (API 74; ListClientMetricsResources before Kafka 4.1): the resources
// that DescribeConfigs can be asked about. Topics (every topic) and brokers (every registered
// broker) are listed. Client-metrics subscriptions and group configs do not exist here, so
// those types list nothing; broker loggers have no configs here and are refused by name.
// v0 asks for client-metrics resources only; v1 names the types, none meaning all.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/protocol/messages/list_config_resources_request.h"
#include "brokerd/protocol/messages/list_config_resources_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"
#include "kafka/handlers/config_resources.h"

namespace brokerd::kafka {

boost::asio::awaitable<net::Response> handle_list_config_resources(HandlerContext& ctx) {
  auto req = ctx.decode<protocol::ListConfigResourcesRequest>();
  protocol::ListConfigResourcesResponse resp;
  if (!authorized_cluster(ctx, acl::Operation::describe_configs)) {
    resp.error_code = protocol::code(protocol::ErrorCode::cluster_authorization_failed);
    co_return ctx.respond(resp);
  }
  std::vector<int8_t> types = ctx.version >= 1 ? req.resource_types : std::vector<int8_t>{resource_type::client_metrics};
  if (types.empty())
    types = {resource_type::topic, resource_type::broker, resource_type::client_metrics, resource_type::group};
  for (int8_t t : types) {
    if (t != resource_type::topic && t != resource_type::broker && t != resource_type::client_metrics &&
        t != resource_type::group) {
      resp.error_code = protocol::code(protocol::ErrorCode::invalid_request);
      co_return ctx.respond(resp);
    }
  }
  auto image = ctx.services.metadata.image();
  auto add = [&](std::string name, int8_t type) {
    auto& r = resp.config_resources.emplace_back();
    r.resource_name = std::move(name);
    r.resource_type = type;
  };
  for (int8_t t : types) {
    if (t == resource_type::topic) image->for_each_topic([&](const metadata::TopicPtr& topic) { add(topic->name, t); });
    if (t == resource_type::broker)
      for (const auto& b : image->brokers) add(std::to_string(b.node_id), t);
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
