#pragma once
// Tenant limits: how many topics, and partitions in all, the topics created by a principal
// (LITERAL) or by every principal starting with a prefix (PREFIXED, a team) may number.
// A topic counts toward a limit when its owner (the principal that created it) matches the
// limit's pattern; a creation must satisfy every limit that matches its principal. As data,
// with the checks AlterTenantLimits applies and the usage arithmetic; pure, no I/O.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace brokerd::tenant {

inline constexpr std::string_view kMaxTopics = "max.topics";
inline constexpr std::string_view kMaxPartitions = "max.partitions";
// Kafka's PatternType codes, as ACLs use them.
inline constexpr int8_t kLiteral = 3, kPrefixed = 4;

struct Pattern {
  std::string principal;  // "User:alice", or a prefix such as "User:team-a-"
  int8_t type = kLiteral;
  auto operator<=>(const Pattern&) const = default;
};

bool matches(const Pattern& p, std::string_view principal);
// "User:alice" or "User:team-a-*" for messages and tables.
std::string to_string(const Pattern& p);

// Every limit set: pattern -> key -> value.
using LimitSet = std::map<Pattern, std::map<std::string, int64_t, std::less<>>>;

// Why AlterTenantLimits refuses a pattern (empty: acceptable): a known pattern type, a
// principal of the form Type:name (a prefix may end anywhere after the colon's type).
std::string check_pattern(const Pattern& p);
// Why it refuses one operation: only the two keys above, values of at least 0.
std::string check_op(std::string_view key, int64_t value, bool remove);

// What the topics matching a pattern hold.
struct Usage {
  int64_t topics = 0;
  int64_t partitions = 0;
};

// Whether `principal` may own `add_topics` more topics with `add_partitions` more partitions:
// nullopt when every matching limit allows it, else the message naming the first limit it
// would exceed (POLICY_VIOLATION's). `usage(pattern)` counts what the pattern's topics hold
// now.
std::optional<std::string> exceeded(const LimitSet& limits, std::string_view principal, int64_t add_topics,
                                    int64_t add_partitions, const std::function<Usage(const Pattern&)>& usage);

}  // namespace brokerd::tenant
