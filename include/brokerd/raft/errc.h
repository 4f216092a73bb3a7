#pragma once
// Errors carried in raft responses; values are Kafka's error codes so the network adapter
// can copy them onto the wire unchanged.
#include <cstdint>

namespace brokerd::raft {

enum class Errc : int16_t {
  none = 0,
  not_leader_or_follower = 6,
  fenced_leader_epoch = 74,
  unknown_leader_epoch = 76,
  inconsistent_voter_set = 94,
  snapshot_not_found = 98,
  position_out_of_range = 99,
  inconsistent_cluster_id = 104,  // the network adapter's: the sender belongs to another cluster
};

const char* errc_name(Errc e);

}  // namespace brokerd::raft
