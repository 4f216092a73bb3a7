#pragma once
// UpdateFeatures (KIP-584) as the active controller answers it (other brokers forward it):
// every update checked (features.h), then all of them committed in one change, or none.
#include "brokerd/protocol/messages/update_features_request.h"
#include "brokerd/protocol/messages/update_features_response.h"

namespace brokerd::metadata {

class MetadataStore;

// Blocks until the change commits: call it off the reactors. The answer's per-feature results
// (versions 0-1) repeat the request's outcome, as Kafka's controller answers.
protocol::UpdateFeaturesResponse answer_update_features(MetadataStore& store, const protocol::UpdateFeaturesRequest& req);

}  // namespace brokerd::metadata
