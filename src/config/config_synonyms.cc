#include "brokerd/config/config_synonyms.h"

#include <algorithm>
#include <array>

#include "brokerd/config/properties.h"

namespace brokerd::config {
namespace {

constexpr int64_t kMinute = 60'000;
constexpr int64_t kHour = 3'600'000;

// Kafka's broker key synonyms (its DynamicBrokerConfig.brokerConfigSynonyms).
constexpr UnitSynonym kRetention[] = {{"log.retention.ms", 1}, {"log.retention.minutes", kMinute}, {"log.retention.hours", kHour}};
constexpr UnitSynonym kRoll[] = {{"log.roll.ms", 1}, {"log.roll.hours", kHour}};
constexpr UnitSynonym kJitter[] = {{"log.roll.jitter.ms", 1}, {"log.roll.jitter.hours", kHour}};
constexpr UnitSynonym kFlush[] = {{"log.flush.interval.ms", 1}, {"log.flush.scheduler.interval.ms", 1}};
constexpr std::span<const UnitSynonym> kGroups[] = {kRetention, kRoll, kJitter, kFlush};

// Listener keys Kafka names listener.name.<listener>.<mechanism>.<key>.
constexpr std::string_view kMechanismKeys[] = {
    "sasl.jaas.config", "sasl.login.callback.handler.class", "sasl.login.class", "sasl.server.callback.handler.class",
    "connections.max.reauth.ms",
};

}  // namespace

std::span<const UnitSynonym> time_synonyms(std::string_view name) {
  for (auto group : kGroups)
    if (std::any_of(group.begin(), group.end(), [&](const UnitSynonym& s) { return s.name == name; })) return group;
  return {};
}

std::vector<std::string> broker_synonyms(std::string_view name) {
  if (auto group = time_synonyms(name); !group.empty()) {
    std::vector<std::string> out;
    for (const auto& s : group) out.emplace_back(s.name);
    return out;
  }
  if (auto base = listener_scoped_suffix(name)) {
    std::string_view synonym = *base;
    for (std::string_view key : kMechanismKeys)
      if (base->ends_with(key)) synonym = key;
    return {std::string(name), std::string(synonym)};
  }
  return {std::string(name)};
}

std::optional<int64_t> time_in_ms(std::string_view primary,
                                  const std::function<std::optional<std::string>(std::string_view)>& value_of) {
  for (const auto& s : time_synonyms(primary)) {
    auto v = value_of(s.name);
    if (!v) continue;
    const int64_t n = std::stoll(*v);
    if (primary == "log.retention.ms" && n < 0) return -1;
    return n * s.ms_per_unit;
  }
  return std::nullopt;
}

}  // namespace brokerd::config
