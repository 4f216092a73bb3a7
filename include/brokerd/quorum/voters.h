#pragma once
// controller.quorum.voters: "id@host:port,..." — the voters of the metadata quorum and where
// their controller listeners are.
#include <cstdint>
#include <string>
#include <vector>

namespace brokerd::quorum {

struct Voter {
  int32_t id = -1;
  std::string host;
  uint16_t port = 0;
  bool operator==(const Voter&) const = default;
};

// Parses the setting; throws std::invalid_argument with one line naming the bad entry
// (malformed, an id twice, a port out of range).
std::vector<Voter> parse_voters(const std::string& text);

}  // namespace brokerd::quorum
