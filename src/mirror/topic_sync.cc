#include "topic_sync.h"

#include <fmt/format.h>

#include <algorithm>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/metadata/topic_config.h"
#include "brokerd/common/logger.h"
#include "brokerd/protocol/messages/describe_configs_request.h"
#include "brokerd/protocol/messages/describe_configs_response.h"

namespace brokerd::mirror {
namespace {

using metadata::ConfigMap;
using protocol::ErrorCode;

constexpr int8_t kTopicResource = 2;
constexpr int8_t kDynamicTopicConfig = 1;  // DescribeConfigs' config_source of a topic override

// The source topics' overrides that a mirror copies (and this cluster knows), by topic;
// topics whose configs could not be read are left out.
std::map<std::string, ConfigMap> source_configs(const SourceMetadata& source, const std::vector<std::string>& topics,
                                                SourceCluster& client, std::string& error) {
  std::map<std::string, ConfigMap> out;
  if (topics.empty() || source.brokers.empty()) return out;
  protocol::DescribeConfigsRequest req;
  for (const auto& t : topics) {
    auto& r = req.resources.emplace_back();
    r.resource_type = kTopicResource;
    r.resource_name = t;
    r.configuration_keys = std::nullopt;
  }
  for (const auto& [id, broker] : source.brokers) {
    auto resp = client.call<protocol::DescribeConfigsResponse>(broker, 4, req, error);
    if (!resp) continue;
    for (const auto& r : resp->results) {
      if (r.error_code != 0) continue;
      ConfigMap& c = out[r.resource_name];
      for (const auto& e : r.configs) {
        if (e.config_source != kDynamicTopicConfig || !e.value || !metadata::mirrored_config(e.name)) continue;
        ConfigMap one{{e.name, *e.value}};
        if (metadata::validate_topic_configs(one).first == ErrorCode::none) c.insert(one.begin(), one.end());
      }
    }
    return out;
  }
  return out;
}

// The mirror's overrides: the source's mirrored ones, plus this cluster's own that a mirror
// does not copy (throttles, min.insync.replicas).
ConfigMap merged(const ConfigMap& mirror, const ConfigMap& source) {
  ConfigMap out = source;
  for (const auto& [k, v] : mirror)
    if (!metadata::mirrored_config(k)) out[k] = v;
  return out;
}

}  // namespace

partitions::LinkState sync_topics(const metadata::MirrorLink& link, const SourceMetadata& source, SourceCluster& client,
                               metadata::MetadataStore& store, int32_t replication_factor) {
  static auto log = module_logger("mirror");
  partitions::LinkState state;
  state.state = "active";
  std::vector<std::string> problems;
  const auto image = store.image();
  std::vector<const SourceTopic*> wanted;
  for (const auto& [name, t] : source.topics)
    if (link.mirrors_topic(name) && t.error == 0 && !t.leaders.empty()) wanted.push_back(&t);
  for (const auto& name : link.topics)
    if (!source.topics.count(name)) problems.push_back(fmt::format("topic '{}' does not exist on the source", name));

  std::vector<std::string> names;
  for (const auto* t : wanted) names.push_back(t->name);
  std::string config_error;
  const auto configs = link.sync_configs ? source_configs(source, names, client, config_error) : std::map<std::string, ConfigMap>{};

  std::vector<metadata::TopicSpec> creates;
  const int32_t rf = std::max(1, std::min(replication_factor, image->live_brokers()));
  for (const auto* t : wanted) {
    const metadata::TopicMetadata* mine = image->topic(t->name);
    auto cfg = configs.find(t->name);
    if (!mine) {
      metadata::TopicSpec spec;
      spec.name = t->name;
      spec.partitions = static_cast<int32_t>(t->leaders.size());
      spec.replication_factor = rf;
      if (cfg != configs.end()) spec.configs = cfg->second;
      spec.mirror_link = link.name;
      spec.source_topic_id = t->id;
      creates.push_back(std::move(spec));
      continue;
    }
    if (mine->mirror_link != link.name) {
      if (mine->source_topic_id != t->id || mine->mirror_link.empty())
        problems.push_back(mine->mirror_link.empty() && mine->source_topic_id.is_zero()
                               ? fmt::format("topic '{}' exists here and is not a mirror", t->name)
                           : mine->mirror_link.empty() ? fmt::format("topic '{}' was promoted", t->name)
                                                       : fmt::format("topic '{}' is mirrored by link '{}'", t->name,
                                                                     mine->mirror_link));
      continue;
    }
    if (mine->source_topic_id != t->id) {
      problems.push_back(fmt::format("source topic '{}' was deleted and recreated (id {}, mirrored {}): its mirror "
                                     "stopped; delete the mirror topic to mirror the new one",
                                     t->name, t->id.to_string(), mine->source_topic_id.to_string()));
      continue;
    }
    const auto source_partitions = static_cast<int32_t>(t->leaders.size());
    if (source_partitions > mine->partition_count()) {
      auto r = store.create_partitions(t->name, source_partitions, false);
      if (r.error != ErrorCode::none)
        problems.push_back(fmt::format("cannot add partitions to '{}': {}", t->name, r.message));
      else
        log->info("link {}: mirror topic {} grew to {} partitions", link.name, t->name, source_partitions);
    }
    if (cfg != configs.end()) {
      ConfigMap next = merged(mine->configs, cfg->second);
      if (next != mine->configs) {
        auto r = store.set_topic_configs(t->name, next, false);
        if (r.error != ErrorCode::none)
          problems.push_back(fmt::format("cannot copy the configs of '{}': {}", t->name, r.message));
      }
    }
  }
  if (!creates.empty()) {
    auto results = store.create_topics(creates, false);
    for (size_t i = 0; i < results.size(); ++i) {
      if (results[i].error == ErrorCode::none) {
        log->info("link {}: created mirror topic {} ({} partitions)", link.name, creates[i].name, creates[i].partitions);
      } else if (results[i].error != ErrorCode::topic_already_exists) {
        problems.push_back(fmt::format("cannot create mirror topic '{}': {}", creates[i].name, results[i].message));
      }
    }
  }
  if (!config_error.empty()) problems.push_back("cannot read the source's topic configs: " + config_error);
  if (!problems.empty()) {
    state.message = problems.front();
    if (problems.size() > 1) state.message += fmt::format(" (and {} more)", problems.size() - 1);
  }
  return state;
}

}  // namespace brokerd::mirror
