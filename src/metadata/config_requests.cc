#include "brokerd/metadata/config_requests.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "brokerd/config/broker_config.h"
#include "brokerd/config/broker_keys.h"
#include "brokerd/config/dynamic_configs.h"
#include "brokerd/config/properties.h"
#include "brokerd/metadata/metadata_store.h"

namespace brokerd::metadata {
namespace {

using protocol::ErrorCode;
using Resource = protocol::IncrementalAlterConfigsRequest::AlterConfigsResource;
using ConfigMap = std::map<std::string, std::string>;

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

// Why an operation on a key is refused: unknown keys (topics only: a broker stores any key,
// as Kafka does), APPEND or SUBTRACT on a key whose type is not LIST. Topics answer with the
// controller's words, brokers with the broker's (Kafka checks broker keys on the broker).
std::optional<ConfigRefusal> refuse_op(int8_t op, const std::string& name, const KeyInfo& key, bool broker) {
  const bool list_op = op == kConfigAppend || op == kConfigSubtract;
  if (!broker && !key.known) return ConfigRefusal{ErrorCode::invalid_config, fmt::format("Unknown topic config name: {}", name)};
  if (!list_op || key.list) return std::nullopt;
  if (!broker)
    return ConfigRefusal{ErrorCode::invalid_config, fmt::format("Can't {} to key {} because its type is not LIST.",
                                                                op == kConfigAppend ? "APPEND" : "SUBTRACT", name)};
  if (!key.known) return ConfigRefusal{ErrorCode::invalid_config, fmt::format("Unknown config name: {}", name)};
  return ConfigRefusal{ErrorCode::invalid_config, fmt::format("Config value {} is not allowed for config key: {}",
                                                              op == kConfigAppend ? "append" : "subtract", name)};
}

// The default of topic property `name` in force: the cluster's dynamic default of the broker
// key it follows, else this node's static one. Per-broker layers are left out: a topic's
// replicas live on several brokers.
std::string topic_in_force(const config::BrokerConfig& statics, const MetadataImage& image, const std::string& name) {
  for (const auto& def : config::broker_properties())
    if (def.topic_name == name)
      if (const auto* v = config::layer_value(*image.broker_configs, "", def.name)) return *v;
  const auto defaults = statics.topic_defaults();
  auto it = defaults.find(name);
  if (it != defaults.end()) return it->second;
  const auto* def = config::find_topic_property(name);
  return def ? std::string(def->default_value) : std::string();
}

// The value of broker key `name` in force for resource `resource` when the resource does not
// set it: a broker's falls back to the cluster default, either to the static config (this
// node's). Keys that are not brokerd's own have no value beneath the dynamic layers.
std::string broker_in_force(const config::BrokerConfig& statics, const MetadataImage& image, const std::string& resource,
                            const std::string& name) {
  if (!config::find_broker_property(name)) return {};
  if (!resource.empty())
    if (const auto* v = config::layer_value(*image.broker_configs, "", name)) return *v;
  return statics.value(name).value_or("");
}

// A mirror whose link copies configs keeps the source's: only the settings it does not copy
// (min.insync.replicas, ...) are this cluster's to change.
std::optional<ConfigRefusal> refuse_mirror_change(const MetadataImage& image, const std::string& topic,
                                                  const ConfigMap& before, const ConfigMap& after) {
  const TopicMetadata* t = image.topic(topic);
  if (!t || t->mirror_link.empty()) return std::nullopt;
  const MirrorLink* link = image.link(t->mirror_link);
  auto copied = [](const ConfigMap& configs) {
    ConfigMap out;
    for (const auto& [k, v] : configs)
      if (mirrored_config(k)) out.emplace(k, v);
    return out;
  };
  if (!link || !link->sync_configs || copied(before) == copied(after)) return std::nullopt;
  return ConfigRefusal{ErrorCode::invalid_request, read_only_mirror(topic, t->mirror_link)};
}

MetadataStore::ChangeAnswer refusal_answer(const ConfigRefusal& r) { return {r.error, r.message}; }

// One resource, checked and written through the store's edit (under its write mutex).
ConfigRefusal alter_resource(MetadataStore& store, const Resource& res, bool validate_only,
                             const config::BrokerConfig& statics) {
  if (res.resource_type == kBrokerConfigResource) {
    ConfigMap before, after;
    auto change = store.edit_broker_configs(
        res.resource_name,
        [&](const MetadataImage& image, ConfigMap& configs) {
          before = configs;
          auto in_force = [&](const std::string& name) { return broker_in_force(statics, image, res.resource_name, name); };
          if (auto refused = apply_config_ops(res, configs, true, in_force)) return refusal_answer(*refused);
          after = configs;
          return MetadataStore::ChangeAnswer{};
        },
        validate_only);
    if (change.error == ErrorCode::none && !validate_only) config::note_keys_without_effect(res.resource_name, before, after);
    return {change.error, change.message};
  }
  if (!store.image()->topic(res.resource_name))
    return {ErrorCode::unknown_topic_or_partition, fmt::format("The topic '{}' does not exist.", res.resource_name)};
  auto change = store.edit_topic_configs(
      res.resource_name,
      [&](const MetadataImage& image, ConfigMap& configs) {
        const ConfigMap before = configs;
        auto in_force = [&](const std::string& name) { return topic_in_force(statics, image, name); };
        if (auto refused = apply_config_ops(res, configs, false, in_force)) return refusal_answer(*refused);
        if (auto refused = refuse_mirror_change(image, res.resource_name, before, configs)) return refusal_answer(*refused);
        return MetadataStore::ChangeAnswer{};
      },
      validate_only);
  return {change.error, change.message};
}

}  // namespace

std::optional<ConfigRefusal> apply_config_ops(const Resource& res, ConfigMap& configs, bool broker,
                                              const ConfigInForce& in_force) {
  for (const auto& c : res.configs) {
    if (c.config_operation < kConfigSet || c.config_operation > kConfigSubtract)
      return ConfigRefusal{ErrorCode::invalid_request, fmt::format("Unknown alter config operation type {}", c.config_operation)};
    if (c.config_operation != kConfigDelete && !c.value)
      return ConfigRefusal{ErrorCode::invalid_request, fmt::format("Null value not supported for : {}", c.name)};
    if (auto refusal = refuse_op(c.config_operation, c.name, broker ? broker_key_info(c.name) : topic_key_info(c.name), broker))
      return refusal;
    switch (c.config_operation) {
      case kConfigSet:
        configs[c.name] = *c.value;
        break;
      case kConfigDelete:
        configs.erase(c.name);
        break;
      case kConfigAppend:
      case kConfigSubtract: {
        // Starts from the value in force.
        auto current = configs.contains(c.name) ? configs.at(c.name) : in_force(c.name);
        auto items = split(current);
        for (const auto& v : split(*c.value)) {
          auto it = std::find(items.begin(), items.end(), v);
          if (c.config_operation == kConfigAppend && it == items.end()) items.push_back(v);
          if (c.config_operation == kConfigSubtract && it != items.end()) items.erase(it);
        }
        configs[c.name] = join(items);
        break;
      }
    }
  }
  return std::nullopt;
}

std::optional<ConfigRefusal> check_config_keys(const Resource& res) {
  std::set<std::string> names;
  for (const auto& c : res.configs)
    if (!names.insert(c.name).second) return ConfigRefusal{ErrorCode::invalid_request, "Error due to duplicate config keys"};
  return std::nullopt;
}

protocol::IncrementalAlterConfigsResponse answer_incremental_alter_configs(
    MetadataStore& store, const protocol::IncrementalAlterConfigsRequest& req, const config::BrokerConfig& statics) {
  std::map<std::pair<int8_t, std::string>, int> seen;
  for (const auto& res : req.resources) ++seen[{res.resource_type, res.resource_name}];
  const bool leads = store.leads();
  protocol::IncrementalAlterConfigsResponse resp;
  for (const auto& res : req.resources) {
    ConfigRefusal result;
    if (!leads) {
      result = {ErrorCode::not_controller, "This node does not lead the metadata quorum."};
    } else if (seen[{res.resource_type, res.resource_name}] > 1) {
      result = {ErrorCode::invalid_request, "Each resource must appear at most once."};
    } else if (res.resource_type != kTopicConfigResource && res.resource_type != kBrokerConfigResource) {
      result = {ErrorCode::invalid_request, "The controller changes topic and broker configs only."};
    } else if (auto duplicate = check_config_keys(res)) {
      result = *duplicate;
    } else {
      result = alter_resource(store, res, req.validate_only, statics);
    }
    auto& out = resp.responses.emplace_back();
    out.error_code = protocol::code(result.error);
    out.error_message = result.error == ErrorCode::none ? std::nullopt : std::optional<std::string>(result.message);
    out.resource_type = res.resource_type;
    out.resource_name = res.resource_name;
  }
  return resp;
}

}  // namespace brokerd::metadata
