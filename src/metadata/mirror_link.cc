#include "brokerd/metadata/mirror_link.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "brokerd/metadata/metadata_image.h"
#include "brokerd/auth/client_properties.h"

namespace brokerd::metadata {
namespace {

bool any_prefix(const std::vector<std::string>& prefixes, std::string_view name) {
  return std::any_of(prefixes.begin(), prefixes.end(), [&](const std::string& p) { return name.starts_with(p); });
}

bool contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

bool MirrorLink::mirrors_topic(std::string_view name) const {
  if (is_internal_topic(name) || contains(exclude_topics, name)) return false;
  return contains(topics, name) || any_prefix(topic_prefixes, name);
}

bool MirrorLink::mirrors_group(std::string_view group) const {
  return all_groups || contains(groups, group) || any_prefix(group_prefixes, group);
}

std::string check_link(const MirrorLink& link) {
  if (!valid_topic_name(link.name)) return "link name '" + link.name + "' is illegal: use 1-249 of [a-zA-Z0-9._-]";
  if (link.source_bootstrap.empty()) return "the link needs the source's bootstrap servers";
  if (link.topics.empty() && link.topic_prefixes.empty()) return "the link names no topic and no topic prefix";
  for (const auto& t : link.topics)
    if (!valid_topic_name(t) || is_internal_topic(t)) return "topic '" + t + "' cannot be mirrored";
  for (const auto& p : link.topic_prefixes)
    if (p.empty()) return "an empty topic prefix would mirror every topic: name the prefix";
  static const std::set<std::string_view> understood = {
      "client.id",          "request.timeout.ms",       "security.protocol",     "sasl.mechanism",
      "sasl.username",      "sasl.password",            "sasl.jaas.config",      "ssl.ca.location",
      "ssl.truststore.location", "ssl.truststore.type", "ssl.certificate.location", "ssl.key.location",
      "ssl.keystore.location",   "ssl.keystore.type",   "ssl.key.password",      "ssl.endpoint.identification.algorithm"};
  for (const auto& [k, v] : link.source_configs)
    if (!understood.contains(k)) return "source client setting '" + k + "' is not supported";
  try {
    auth::parse_client_properties(link.source_configs);
  } catch (const std::invalid_argument& e) {
    return std::string("source client settings: ") + e.what();
  }
  return {};
}

bool is_secret_setting(std::string_view key) {
  return key == "sasl.password" || key == "ssl.key.password" || key == "sasl.jaas.config";
}

bool mirrored_config(std::string_view name) {
  return !name.ends_with(".replication.throttled.replicas") && name != "min.insync.replicas" &&
         name != "unclean.leader.election.enable";
}

std::string read_only_mirror(std::string_view topic, std::string_view link) {
  return fmt::format("Topic {} is a mirror of link {} and is read-only until the link promotes it.", topic, link);
}

}  // namespace brokerd::metadata
