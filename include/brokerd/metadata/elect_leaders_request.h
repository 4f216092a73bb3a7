#pragma once
// ElectLeaders (API 43) as the active controller answers it, for the controller listener and
// for a broker listener of the node that leads the metadata quorum (other brokers forward
// the request to it). Blocks until the elections commit: call it off the reactors.
#include <cstdint>

#include "brokerd/protocol/messages/elect_leaders_request.h"
#include "brokerd/protocol/messages/elect_leaders_response.h"

namespace brokerd::metadata {

class MetadataStore;

// The versions served (Kafka 3.9 and 4.x serve 0-2).
inline constexpr int16_t kElectLeaders = 43, kElectLeadersMinVersion = 0, kElectLeadersMaxVersion = 2;

protocol::ElectLeadersResponse answer_elect_leaders(MetadataStore& store, const protocol::ElectLeadersRequest& req,
                                                    int16_t version);

}  // namespace brokerd::metadata
