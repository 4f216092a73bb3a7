#pragma once
// UpdateFeatures (KIP-584) as the active controller answers it (other brokers forward it):
// every update checked (features.h), then all of them committed in one change, or none.
#include <optional>
#include <string>

#include "brokerd/protocol/error_code.h"
#include "brokerd/protocol/messages/update_features_request.h"
#include "brokerd/protocol/messages/update_features_response.h"

namespace brokerd::metadata {

class MetadataStore;

// Blocks until the change commits: call it off the reactors. The answer's per-feature results
// (versions 0-1) repeat the request's outcome, as Kafka's controller answers.
protocol::UpdateFeaturesResponse answer_update_features(MetadataStore& store, const protocol::UpdateFeaturesRequest& req);
// The answer to `req` when it failed as a whole: the error, its message, and (versions 0-1)
// the same for every feature named.
void fill_update_features_error(const protocol::UpdateFeaturesRequest& req, protocol::UpdateFeaturesResponse& resp,
                                protocol::ErrorCode error, const std::optional<std::string>& message);

}  // namespace brokerd::metadata
