#include "brokerd/tenant/tenant_limits.h"

#include <fmt/format.h>

namespace brokerd::tenant {

bool matches(const Pattern& p, std::string_view principal) {
  return p.type == kPrefixed ? principal.starts_with(p.principal) : principal == p.principal;
}

std::string to_string(const Pattern& p) { return p.type == kPrefixed ? p.principal + "*" : p.principal; }

std::string check_pattern(const Pattern& p) {
  if (p.type != kLiteral && p.type != kPrefixed)
    return fmt::format("Pattern type {} is not LITERAL (3) or PREFIXED (4).", p.type);
  const auto colon = p.principal.find(':');
  if (colon == std::string::npos || colon == 0 || (p.type == kLiteral && colon + 1 == p.principal.size()))
    return fmt::format("Principal '{}' is not of the form Type:name (User:alice, or a prefix such as User:team-a-).",
                       p.principal);
  return {};
}

std::string check_op(std::string_view key, int64_t value, bool remove) {
  if (key != kMaxTopics && key != kMaxPartitions)
    return fmt::format("'{}' is not a tenant limit: {} and {} are.", key, kMaxTopics, kMaxPartitions);
  if (!remove && value < 0) return fmt::format("{} must be 0 or more, not {}.", key, value);
  return {};
}

std::optional<std::string> exceeded(const LimitSet& limits, std::string_view principal, int64_t add_topics,
                                    int64_t add_partitions, const std::function<Usage(const Pattern&)>& usage) {
  for (const auto& [pattern, values] : limits) {
    if (!matches(pattern, principal)) continue;
    const auto topics = values.find(kMaxTopics);
    const auto partitions = values.find(kMaxPartitions);
    if (topics == values.end() && partitions == values.end()) continue;
    const Usage now = usage(pattern);
    if (topics != values.end() && add_topics > 0 && now.topics + add_topics > topics->second)
      return fmt::format("Tenant limit {}={} for {} exceeded: its topics number {}, and {} more were asked for.",
                         kMaxTopics, topics->second, to_string(pattern), now.topics, add_topics);
    if (partitions != values.end() && add_partitions > 0 && now.partitions + add_partitions > partitions->second)
      return fmt::format("Tenant limit {}={} for {} exceeded: its topics have {} partitions, and {} more were asked for.",
                         kMaxPartitions, partitions->second, to_string(pattern), now.partitions, add_partitions);
  }
  return std::nullopt;
}

}  // namespace brokerd::tenant
