#include "brokerctl/checks.h"

#include <map>

#include "brokerctl/args.h"
#include "brokerd/config/dynamic_configs.h"
#include "brokerd/config/properties.h"

namespace brokerctl {

void check_topic_name(const std::string& name) {
  if (name.empty()) throw UsageError("invalid topic name: it is empty");
  if (name == "." || name == "..") throw UsageError("invalid topic name '" + name + "': '.' and '..' are not allowed");
  if (name.size() > 249) throw UsageError("invalid topic name: longer than 249 characters");
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) {
      throw UsageError("invalid topic name '" + name + "': only ASCII letters, digits, '.', '_' and '-' are allowed");
    }
  }
}

void check_group_name(const std::string& name) {
  if (name.empty()) throw UsageError("invalid group id: it is empty");
}

static void check_key(const std::string& key) {
  if (!brokerd::config::find_topic_property(key)) throw UsageError("unknown topic config '" + key + "'");
}

// "K=V" split at its first '=', or a UsageError naming `option`.
static ConfigChange split_config_item(const std::string& item, const std::string& option) {
  auto eq = item.find('=');
  if (eq == std::string::npos || eq == 0) throw UsageError("--" + option + " expects KEY=VALUE, got '" + item + "'");
  return {item.substr(0, eq), item.substr(eq + 1)};
}

std::vector<ConfigChange> parse_topic_configs(const std::vector<std::string>& items, const std::string& option) {
  std::vector<ConfigChange> out;
  for (const auto& item : items) {
    ConfigChange c = split_config_item(item, option);
    check_key(c.key);
    const auto* def = brokerd::config::find_topic_property(c.key);
    if (auto err = brokerd::config::validate_value(*def, c.value)) {
      throw UsageError("invalid config value: " + *err);
    }
    out.push_back(std::move(c));
  }
  return out;
}

void check_topic_config_keys(const std::vector<std::string>& keys) {
  for (const auto& k : keys) check_key(k);
}

std::vector<ConfigChange> parse_broker_configs(const std::vector<std::string>& items, const std::string& option,
                                               bool cluster_default) {
  std::vector<ConfigChange> out;
  std::map<std::string, std::string> values;
  for (const auto& item : items) {
    ConfigChange c = split_config_item(item, option);
    values[c.key] = c.value;
    out.push_back(std::move(c));
  }
  if (auto err = brokerd::config::check_dynamic(values, cluster_default, nullptr)) throw UsageError(*err);
  return out;
}

}  // namespace brokerctl
