#pragma once
// The controller listener (controller.listener.names): the KRaft RPCs between the nodes of
// the metadata quorum — Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch and FetchSnapshot of
// `__cluster_metadata` — the brokers' BrokerRegistration and BrokerHeartbeat, the metadata
// changes brokers forward to the active controller (CreateTopics, DeleteTopics,
// CreatePartitions, AlterConfigs, IncrementalAlterConfigs, AllocateProducerIds, and brokerd's
// own), plus ApiVersions
// and DescribeQuorum. A CreateTopics a client sent comes in an Envelope (58) naming the
// client's principal, which owns the topics (tenant limits count them).
// Client APIs are not served here: such a request closes its connection, as any unserved
// API does.
//
// On a SASL_* controller listener a connection authenticates first (SaslHandshake v1,
// SaslAuthenticate). With an authorizer configured, every request but ApiVersions and SASL's
// needs CLUSTER_ACTION on the cluster (DescribeQuorum: DESCRIBE), as in Kafka: the nodes'
// own principals are super users or hold it. BrokerRegistration, BrokerHeartbeat and
// DescribeQuorum are refused with CLUSTER_AUTHORIZATION_FAILED; any other request closes
// its connection, with a warning at most every ten seconds per principal.
#include <cstdint>
#include <vector>

#include "brokerd/net/request.h"
#include "brokerd/quorum/rate_limited_log.h"

namespace brokerd::quorum {
class QuorumDriver;
}
namespace brokerd::net {
class BlockingPool;
}
namespace brokerd::protocol {
class Reader;
}
namespace brokerd::metadata {
class MetadataStore;
}  // namespace brokerd::metadata
namespace brokerd::config {
class BrokerConfig;
}
namespace brokerd::security {
class SaslListeners;
struct Authorization;
}

namespace brokerd::controller {

struct ControllerApi {
  int16_t api_key;
  int16_t min_version;
  int16_t max_version;
};

// What the controller listener serves, for ApiVersions and tests.
const std::vector<ControllerApi>& controller_apis();

class BrokerRegistry;

class ControllerDispatcher final : public net::Dispatcher {
 public:
  // Registration and heartbeats block on the quorum: they run on `blocking`. `statics` is
  // this node's static config: IncrementalAlterConfigs' APPEND and SUBTRACT start from it for
  // a key no dynamic layer sets.
  ControllerDispatcher(quorum::QuorumDriver& quorum, metadata::MetadataStore& metadata, BrokerRegistry& brokers,
                       net::BlockingPool& blocking, const security::SaslListeners& sasl,
                       const security::Authorization& authorization, const config::BrokerConfig& statics)
      : quorum_(quorum),
        metadata_(metadata),
        brokers_(brokers),
        blocking_(blocking),
        sasl_(sasl),
        authorization_(authorization),
        statics_(statics) {}
  boost::asio::awaitable<net::Response> dispatch(net::Request req) override;

 private:
  // Decodes a Req, runs `serve` on it on the blocking pool (it waits on the quorum) and
  // encodes its answer.
  template <typename Req, typename F>
  boost::asio::awaitable<net::Response> on_blocking_pool(const net::Request& req, protocol::Reader& body, F serve);
  // Envelope (58): a forwarded CreateTopics with its client's principal.
  boost::asio::awaitable<net::Response> envelope(const net::Request& req, protocol::Reader& body);
  // SaslHandshake and SaslAuthenticate.
  net::Response sasl(const net::Request& req, protocol::Reader& body);
  // Whether the request's principal may send it.
  bool authorized(const net::Request& req);

  quorum::QuorumDriver& quorum_;
  metadata::MetadataStore& metadata_;
  quorum::RateLimitedLog mismatch_log_;
  BrokerRegistry& brokers_;
  net::BlockingPool& blocking_;
  const security::SaslListeners& sasl_;
  const security::Authorization& authorization_;
  const config::BrokerConfig& statics_;
  quorum::RateLimitedLog refusal_log_;
};

}  // namespace brokerd::controller
