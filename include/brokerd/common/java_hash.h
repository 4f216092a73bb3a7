#pragma once
// Java's String.hashCode over the UTF-16 units of a UTF-8 string, and Kafka's Utils.abs: how
// Kafka places a group or a transactional id on a partition of its internal topics.
#include <cstdint>
#include <string_view>

namespace brokerd {

int32_t java_string_hash(std::string_view utf8);

// Kafka's Utils.abs: Integer.MIN_VALUE maps to 0 rather than staying negative.
inline int32_t java_abs(int32_t n) { return n == INT32_MIN ? 0 : (n < 0 ? -n : n); }

}  // namespace brokerd
