#pragma once
// Kafka's 128-bit ids (topic ids, directory ids, cluster-level ids).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace brokerd::protocol {

struct Uuid {
  std::array<uint8_t, 16> bytes{};

  bool operator==(const Uuid&) const = default;
  auto operator<=>(const Uuid&) const = default;

  static Uuid zero() { return {}; }
  // A random version-4 id that is neither zero nor the reserved metadata topic id (1), and
  // whose text form does not start with '-' (so it is never mistaken for a command-line flag).
  static Uuid random();
  bool is_zero() const { return *this == Uuid{}; }

  // URL-safe base64 without padding (22 characters), the form Kafka tools print.
  std::string to_string() const;
  static std::optional<Uuid> from_string(std::string_view text);
};

}  // namespace brokerd::protocol
