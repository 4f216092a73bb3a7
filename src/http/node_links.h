#pragma once
// Connections from this node to the other brokers' inter-broker listener, for the HTTP API's
// requests that another node must answer (the leader of a partition, a group's coordinator).
// Each reactor shard has its own connections and uses them only on its thread. A request
// takes a connection with nothing in flight when one exists (so that a long poll never holds
// a write behind it), else opens another, up to a bound per node, else queues behind the
// least busy one.
#include <boost/asio/awaitable.hpp>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "brokerd/common/bytes.h"
#include "brokerd/security/sasl_client.h"

namespace brokerd::metadata {
class MetadataStore;
struct BrokerInfo;
}  // namespace brokerd::metadata
namespace brokerd::net { class ReactorPool; }
namespace brokerd::quorum { class PeerClient; }

namespace brokerd::http {

class NodeLinks {
 public:
  NodeLinks(net::ReactorPool& reactors, const metadata::MetadataStore& metadata, int32_t node_id,
            security::ClientCredentials credentials);
  ~NodeLinks();
  NodeLinks(const NodeLinks&) = delete;
  NodeLinks& operator=(const NodeLinks&) = delete;

  // Sends the request body (no header) to `node` and returns its response body (after the
  // header), or nullopt when the node is unknown, unreachable or silent for `timeout_ms`.
  // Must run on a reactor shard.
  boost::asio::awaitable<std::optional<Bytes>> call(int32_t node, int16_t api_key, int16_t version, Bytes body,
                                                    int64_t timeout_ms);

  // Closes every connection; later calls fail at once. Call on no shard, before the reactors stop.
  void stop();

 private:
  struct Shard {
    std::map<int32_t, std::vector<std::unique_ptr<quorum::PeerClient>>> links;
  };
  quorum::PeerClient& pick(Shard& shard, size_t index, const metadata::BrokerInfo& node);

  net::ReactorPool& reactors_;
  const metadata::MetadataStore& metadata_;
  int32_t node_id_;
  security::ClientCredentials credentials_;
  std::vector<std::unique_ptr<Shard>> shards_;
  std::atomic<bool> stopped_{false};
};

}  // namespace brokerd::http
