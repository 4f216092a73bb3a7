#pragma once
// The controller listener (controller.listener.names): the KRaft RPCs between the nodes of
// the metadata quorum — Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch and FetchSnapshot of
// `__cluster_metadata` — plus ApiVersions and DescribeQuorum. Client APIs are not served
// here: such a request closes its connection, as any unserved API does.
#include <cstdint>
#include <vector>

#include "brokerd/net/request.h"

namespace brokerd::quorum {
class QuorumDriver;
}

namespace brokerd::controller {

struct ControllerApi {
  int16_t api_key;
  int16_t min_version;
  int16_t max_version;
};

// What the controller listener serves, for ApiVersions and tests.
const std::vector<ControllerApi>& controller_apis();

class ControllerDispatcher final : public net::Dispatcher {
 public:
  explicit ControllerDispatcher(quorum::QuorumDriver& quorum) : quorum_(quorum) {}
  boost::asio::awaitable<net::Response> dispatch(net::Request req) override;

 private:
  quorum::QuorumDriver& quorum_;
};

}  // namespace brokerd::controller
