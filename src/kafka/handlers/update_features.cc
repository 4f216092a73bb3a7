// UpdateFeatures (KIP-584): finalizes feature levels (features.h). It changes metadata, so the
// active controller answers it (other nodes forward it); ALTER on the cluster, as Kafka asks.
#include "brokerd/metadata/feature_requests.h"
#include "kafka/on_controller.h"

namespace brokerd::kafka {

boost::asio::awaitable<net::Response> handle_update_features(HandlerContext& ctx) {
  using Req = protocol::UpdateFeaturesRequest;
  using Resp = protocol::UpdateFeaturesResponse;
  return on_controller<Req, Resp>(
      ctx, [](metadata::MetadataStore& m, const Req& r) { return metadata::answer_update_features(m, r); },
      [](const Req& req, Resp& resp, protocol::ErrorCode e, const char* message) {
        metadata::fill_update_features_error(req, resp, e, std::string(message));
      });
}

}  // namespace brokerd::kafka
