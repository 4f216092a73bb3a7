#pragma once
// Java's String.hashCode over the UTF-16 units of a UTF-8 string, and Kafka's Utils.abs: how
// Kafka places a group or a transactional id on a partition of its internal topics. Kafka's
// murmur2 and its default partitioner: where Java's producer puts a keyed record.
#include <cstdint>
#include <span>
#include <string_view>

namespace brokerd {

int32_t java_string_hash(std::string_view utf8);

// Kafka's Utils.abs: Integer.MIN_VALUE maps to 0 rather than staying negative.
inline int32_t java_abs(int32_t n) { return n == INT32_MIN ? 0 : (n < 0 ? -n : n); }

// Kafka's Utils.murmur2 (32-bit MurmurHash2, seed 0x9747b28c) of the key's bytes.
int32_t kafka_murmur2(std::span<const std::byte> key);

// The partition Java's default partitioner gives a keyed record: murmur2 of the key made
// positive (the sign bit cleared), modulo the partition count (which must be > 0).
inline int32_t default_partition(std::span<const std::byte> key, int32_t partitions) {
  return static_cast<int32_t>(static_cast<uint32_t>(kafka_murmur2(key)) & 0x7fffffffu) % partitions;
}

}  // namespace brokerd
