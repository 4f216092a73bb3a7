#include "brokerd/replication/read_replica.h"

namespace brokerd::replication {

BrokerId choose_read_replica(std::string_view client_rack, BrokerId leader, std::string_view leader_rack,
                             std::span<const ReadCandidate> followers) {
  if (client_rack.empty() || leader_rack == client_rack) return leader;
  const ReadCandidate* best = nullptr;
  for (const auto& c : followers) {
    if (c.rack != client_rack) continue;
    if (!best || c.log_end > best->log_end || (c.log_end == best->log_end && c.id < best->id)) best = &c;
  }
  return best ? best->id : leader;
}

}  // namespace brokerd::replication
