// IncrementalAlterConfigs: SET, DELETE, APPEND and SUBTRACT on a topic's overrides or on a
// broker resource's dynamic configs, applied to the current set and written as a whole.
// APPEND/SUBTRACT work on list properties only.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/config/broker_keys.h"
#include "brokerd/config/properties.h"
#include "brokerd/protocol/messages/incremental_alter_configs_request.h"
#include "brokerd/protocol/messages/incremental_alter_configs_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"
#include "kafka/handlers/config_resources.h"

namespace brokerd::kafka {
namespace {

using protocol::ErrorCode;
using protocol::IncrementalAlterConfigsRequest;
using protocol::IncrementalAlterConfigsResponse;
using Resource = IncrementalAlterConfigsRequest::AlterConfigsResource;

enum Op : int8_t { kSet = 0, kDelete = 1, kAppend = 2, kSubtract = 3 };

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    std::string item = s.substr(start, comma - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) out.push_back(std::move(item));
    start = comma + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
  return out;
}

// What APPEND and SUBTRACT need to know of a key.
struct KeyInfo {
  bool known = false;  // a key of the resource's kind
  bool list = false;   // its type is LIST
};

// Why an operation on a key is refused: unknown keys (topics only: a broker stores any key,
// as Kafka does), APPEND or SUBTRACT on a key whose type is not LIST. Topics answer with the
// controller's words, brokers with the broker's (Kafka checks broker keys on the broker).
std::optional<ConfigResult> refuse_op(int8_t op, const std::string& name, const KeyInfo& key, bool broker) {
  const bool list_op = op == kAppend || op == kSubtract;
  if (!broker && !key.known) return ConfigResult{ErrorCode::invalid_config, fmt::format("Unknown topic config name: {}", name)};
  if (!list_op || key.list) return std::nullopt;
  if (!broker)
    return ConfigResult{ErrorCode::invalid_config, fmt::format("Can't {} to key {} because its type is not LIST.",
                                                               op == kAppend ? "APPEND" : "SUBTRACT", name)};
  if (!key.known) return ConfigResult{ErrorCode::invalid_config, fmt::format("Unknown config name: {}", name)};
  return ConfigResult{ErrorCode::invalid_config, fmt::format("Config value {} is not allowed for config key: {}",
                                                             op == kAppend ? "append" : "subtract", name)};
}

// A resource's values after the operations, or the error that stops them all. `info` tells
// what a key is; `in_force` its value when `overrides` does not set it.
template <typename Info, typename InForce>
std::pair<ConfigResult, std::map<std::string, std::string>> apply(const Resource& res,
                                                                  std::map<std::string, std::string> overrides,
                                                                  bool broker, Info info, InForce in_force) {
  for (const auto& c : res.configs) {
    if (c.config_operation < kSet || c.config_operation > kSubtract)
      return {{ErrorCode::invalid_request, fmt::format("Unknown alter config operation type {}", c.config_operation)}, {}};
    if (c.config_operation != kDelete && !c.value)
      return {{ErrorCode::invalid_request, fmt::format("Null value not supported for : {}", c.name)}, {}};
    if (auto refusal = refuse_op(c.config_operation, c.name, info(c.name), broker)) return {*refusal, {}};
    switch (c.config_operation) {
      case kSet:
        overrides[c.name] = *c.value;
        break;
      case kDelete:
        overrides.erase(c.name);
        break;
      case kAppend:
      case kSubtract: {
        // Starts from the value in force.
        auto current = overrides.contains(c.name) ? overrides.at(c.name) : in_force(c.name);
        auto items = split(current);
        for (const auto& v : split(*c.value)) {
          auto it = std::find(items.begin(), items.end(), v);
          if (c.config_operation == kAppend && it == items.end()) items.push_back(v);
          if (c.config_operation == kSubtract && it != items.end()) items.erase(it);
        }
        overrides[c.name] = join(items);
        break;
      }
    }
  }
  return {{}, std::move(overrides)};
}

// A broker key: brokerd's own (or a listener form of one), else one of Kafka's dynamic keys.
KeyInfo broker_key_info(const std::string& name) {
  if (const auto* def = config::find_broker_property(name)) return {true, def->type == config::PropertyType::list};
  const auto key = config::classify_broker_key(name);
  if (key.row) return {true, key.row->type == config::KafkaType::list};
  return {key.treatment == config::KeyTreatment::read_only, false};
}

KeyInfo topic_key_info(const std::string& name) {
  const auto* def = config::find_topic_property(name);
  return {def != nullptr, def && def->type == config::PropertyType::list};
}

}  // namespace

boost::asio::awaitable<net::Response> handle_incremental_alter_configs(HandlerContext& ctx) {
  auto req = ctx.decode<IncrementalAlterConfigsRequest>();
  auto& svc = ctx.services;

  std::map<std::pair<int8_t, std::string>, int> seen;
  for (const auto& res : req.resources) ++seen[{res.resource_type, res.resource_name}];

  IncrementalAlterConfigsResponse resp;
  for (const auto& res : req.resources) {
    ConfigResult result;
    std::set<std::string> names;
    bool duplicate_keys = false;
    for (const auto& c : res.configs) duplicate_keys |= !names.insert(c.name).second;

    if (seen[{res.resource_type, res.resource_name}] > 1) {
      result = {ErrorCode::invalid_request, "Each resource must appear at most once."};
    } else if (auto e = config_access(ctx, res.resource_type, res.resource_name, acl::Operation::alter_configs);
               e != ErrorCode::none) {
      result = {e, "Not authorized to alter these configs."};
    } else if (auto unsupported = unsupported_alter_resource(res.resource_type)) {
      result = *unsupported;
    } else if (duplicate_keys) {
      result = {ErrorCode::invalid_request, "Error due to duplicate config keys"};
    } else if (res.resource_type == resource_type::broker) {
      if (auto bad = check_broker_resource_name(res.resource_name, svc.node_id)) {
        result = {ErrorCode::invalid_request, *bad};
      } else {
        auto image = svc.metadata.image();
        auto layer = image->broker_configs->find(res.resource_name);
        auto applied = apply(res, layer == image->broker_configs->end() ? std::map<std::string, std::string>{} : layer->second,
                             true, broker_key_info, [&](const std::string& name) {
                               return config::find_broker_property(name) ? broker_setting(svc, name) : std::string();
                             });
        result = applied.first;
        if (result.error == ErrorCode::none)
          result = co_await write_broker_configs(svc, res.resource_name, std::move(applied.second), req.validate_only);
      }
    } else {
      auto image = svc.metadata.image();
      const auto* topic = image->topic(res.resource_name);
      if (!topic) {
        result = {ErrorCode::unknown_topic_or_partition, fmt::format("The topic '{}' does not exist.", res.resource_name)};
      } else {
        const auto defaults = svc.partitions.topic_defaults();
        auto applied = apply(res, topic->configs, false, topic_key_info, [&](const std::string& name) {
          auto it = defaults.find(name);
          return it != defaults.end() ? it->second : std::string(config::find_topic_property(name)->default_value);
        });
        result = applied.first;
        if (result.error == ErrorCode::none)
          result = co_await write_topic_configs(svc, res.resource_name, std::move(applied.second), req.validate_only);
      }
    }
    IncrementalAlterConfigsResponse::AlterConfigsResourceResponse out;
    out.error_code = protocol::code(result.error);
    out.error_message = result.error == ErrorCode::none ? std::nullopt : std::optional<std::string>(result.message);
    out.resource_type = res.resource_type;
    out.resource_name = res.resource_name;
    resp.responses.push_back(std::move(out));
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
