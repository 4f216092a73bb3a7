#include "kafka/handlers/config_resources.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/config/broker_config.h"
#include "brokerd/config/properties.h"
#include "brokerd/kafka/services.h"
#include "brokerd/net/blocking_pool.h"
#include "kafka/mirror_writes.h"

namespace brokerd::kafka {
namespace {

using config::PropertyDef;
using config::PropertyType;
using protocol::ErrorCode;

int8_t config_type_of(PropertyType t) {
  switch (t) {
    case PropertyType::boolean: return 1;
    case PropertyType::string: return 2;
    case PropertyType::choice: return 2;
    case PropertyType::int32: return 3;
    case PropertyType::int64: return 5;
    case PropertyType::ratio: return 6;
    case PropertyType::list: return 7;
    case PropertyType::password: return 9;
  }
  return 0;
}

// The synonyms a broker property contributes, the one in force first: this broker's dynamic
// value, the cluster's dynamic default, the static value (file or flag), the built-in default.
void add_broker_synonyms(const BrokerSettings& broker, const PropertyDef& def, std::vector<ConfigSynonym>& out) {
  std::string name(def.name);
  auto layer = [&](const std::string& resource, int8_t source) {
    if (const auto* v = config::layer_value(broker.dynamic, resource, name)) out.push_back({name, *v, source});
  };
  layer(std::to_string(broker.node_id), config_source::dynamic_broker);
  layer("", config_source::dynamic_default_broker);
  if (broker.statics.source(name) != config::ConfigSource::default_value)
    out.push_back({name, broker.statics.raw(name), config_source::static_broker});
  out.push_back({name, std::string(def.default_value), config_source::default_config});
}

ConfigEntry broker_entry(const PropertyDef& def) {
  ConfigEntry e;
  e.name = std::string(def.name);
  e.type = config_type_of(def.type);
  e.read_only = def.read_only;
  e.doc = def.doc;
  e.sensitive = def.type == PropertyType::password;
  return e;
}

void sort_by_name(std::vector<ConfigEntry>& entries) {
  std::sort(entries.begin(), entries.end(), [](const ConfigEntry& a, const ConfigEntry& b) { return a.name < b.name; });
}

const PropertyDef* broker_synonym_of(std::string_view topic_property) {
  for (const auto& def : config::broker_properties())
    if (def.topic_name == topic_property) return &def;
  return nullptr;
}

}  // namespace

std::vector<ConfigEntry> topic_config_entries(const BrokerSettings& broker,
                                              const std::map<std::string, std::string>& topic_defaults,
                                              const std::map<std::string, std::string>& overrides) {
  std::vector<ConfigEntry> out;
  for (const auto& def : config::topic_properties()) {
    ConfigEntry e;
    e.name = std::string(def.name);
    e.type = config_type_of(def.type);
    e.read_only = false;
    const PropertyDef* synonym = broker_synonym_of(def.name);
    e.doc = !def.doc.empty() ? def.doc : synonym ? synonym->doc : std::string_view{};
    if (auto it = overrides.find(e.name); it != overrides.end())
      e.synonyms.push_back({e.name, it->second, config_source::dynamic_topic});
    if (synonym) add_broker_synonyms(broker, *synonym, e.synonyms);
    if (!e.synonyms.empty()) {
      e.value = e.synonyms.front().value;
      e.source = e.synonyms.front().source;
    } else {
      auto it = topic_defaults.find(e.name);
      e.value = it != topic_defaults.end() ? it->second : std::string(def.default_value);
      e.source = config_source::default_config;
    }
    out.push_back(std::move(e));
  }
  sort_by_name(out);
  return out;
}

std::vector<ConfigEntry> broker_config_entries(const BrokerSettings& broker) {
  std::vector<ConfigEntry> out;
  for (const auto& def : config::broker_properties()) {
    ConfigEntry e = broker_entry(def);
    add_broker_synonyms(broker, def, e.synonyms);
    e.value = e.synonyms.front().value;
    e.source = e.synonyms.front().source;
    out.push_back(std::move(e));
  }
  sort_by_name(out);
  return out;
}

std::vector<ConfigEntry> dynamic_default_entries(const BrokerSettings& broker) {
  std::vector<ConfigEntry> out;
  auto defaults = broker.dynamic.find("");
  if (defaults == broker.dynamic.end()) return out;
  for (const auto& [name, value] : defaults->second) {
    const PropertyDef* def = config::find_broker_property(name);
    if (!def) continue;
    ConfigEntry e = broker_entry(*def);
    e.value = value;
    e.source = config_source::dynamic_default_broker;
    e.synonyms.push_back({name, value, config_source::dynamic_default_broker});
    out.push_back(std::move(e));
  }
  sort_by_name(out);
  return out;
}

std::string broker_setting(const Services& svc, const std::string& name) {
  return config::effective_value(svc.config, *svc.metadata.image()->broker_configs, svc.node_id, name);
}

int64_t broker_integer(const Services& svc, const std::string& name) { return std::stoll(broker_setting(svc, name)); }

std::optional<std::string> check_broker_resource_name(std::string_view name, int32_t node_id) {
  if (name.empty()) return std::nullopt;
  int32_t id = 0;
  auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), id);
  if (ec != std::errc() || p != name.data() + name.size())
    return fmt::format("Broker id must be an integer, but it is: {}", name);
  if (id != node_id)
    return fmt::format("Unexpected broker id, expected {} or empty string, but received {}", node_id, name);
  return std::nullopt;
}

std::string resource_type_name(int8_t type) {
  switch (type) {
    case 0: return "UNKNOWN";
    case 1: return "ANY";
    case resource_type::topic: return "TOPIC";
    case 3: return "GROUP";
    case resource_type::broker: return "BROKER";
    case resource_type::broker_logger: return "BROKER_LOGGER";
    case 16: return "CLIENT_METRICS";
    default: return std::to_string(type);
  }
}

std::optional<ConfigResult> unsupported_alter_resource(int8_t type) {
  if (type == resource_type::topic || type == resource_type::broker) return std::nullopt;
  return ConfigResult{ErrorCode::invalid_request, fmt::format("Unsupported resource type: {}", resource_type_name(type))};
}

namespace {

// Runs `change` (a blocking metadata write) off the reactor, then brings this node's
// partitions in line with the image that has it.
template <typename Change>
boost::asio::awaitable<ConfigResult> write_configs(Services& svc, bool validate_only, Change change) {
  auto done = co_await svc.blocking.run(std::move(change));
  if (done.error == ErrorCode::none && done.image && !validate_only) co_await svc.partitions.reconcile(done.image);
  co_return ConfigResult{done.error, std::move(done.message)};
}

}  // namespace

boost::asio::awaitable<ConfigResult> write_topic_configs(Services& svc, const std::string& topic,
                                                         std::map<std::string, std::string> overrides,
                                                         bool validate_only) {
  // A mirror whose link copies configs keeps the source's: only the settings it does not
  // copy (min.insync.replicas, ...) are this cluster's to change.
  const auto image = svc.metadata.image();
  if (const metadata::TopicMetadata* t = image->topic(topic); t && !t->mirror_link.empty()) {
    const metadata::MirrorLink* link = image->link(t->mirror_link);
    auto copied = [](const std::map<std::string, std::string>& configs) {
      std::map<std::string, std::string> out;
      for (const auto& [k, v] : configs)
        if (metadata::mirrored_config(k)) out.emplace(k, v);
      return out;
    };
    if (link && link->sync_configs && copied(t->configs) != copied(overrides))
      if (auto refusal = refuse_mirror_write(topic, t->mirror_link)) co_return ConfigResult{refusal->error, refusal->message};
  }
  co_return co_await write_configs(svc, validate_only,
                                   [&] { return svc.metadata.set_topic_configs(topic, overrides, validate_only); });
}

boost::asio::awaitable<ConfigResult> write_broker_configs(Services& svc, const std::string& resource,
                                                          std::map<std::string, std::string> configs,
                                                          bool validate_only) {
  co_return co_await write_configs(svc, validate_only,
                                   [&] { return svc.metadata.set_broker_configs(resource, configs, validate_only); });
}

}  // namespace brokerd::kafka
