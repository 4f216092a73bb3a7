#include "http/node_links.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <future>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/net/reactor_pool.h"
#include "brokerd/quorum/peer_client.h"

namespace brokerd::http {

namespace asio = boost::asio;

namespace {

// Connections per shard and node: enough for long polls to wait side by side.
constexpr size_t kMaxLinksPerNode = 16;
// The connection's own bound on a request; each call has its tighter deadline.
constexpr int64_t kLinkTimeoutMs = 300000;

}  // namespace

NodeLinks::NodeLinks(net::ReactorPool& reactors, const metadata::MetadataStore& metadata, int32_t node_id,
                     security::ClientCredentials credentials)
    : reactors_(reactors), metadata_(metadata), node_id_(node_id), credentials_(std::move(credentials)) {
  for (size_t i = 0; i < reactors.size(); ++i) shards_.push_back(std::make_unique<Shard>());
}

NodeLinks::~NodeLinks() = default;

quorum::PeerClient& NodeLinks::pick(Shard& shard, size_t index, const metadata::BrokerInfo& node) {
  auto& links = shard.links[node.node_id];
  quorum::PeerClient* least = nullptr;
  for (auto& link : links) {
    if (link->pending() == 0) return *link;
    if (!least || link->pending() < least->pending()) least = link.get();
  }
  if (links.size() < kMaxLinksPerNode || !least) {
    quorum::Voter to{node.node_id, node.host, static_cast<uint16_t>(node.port)};
    links.push_back(std::make_unique<quorum::PeerClient>(reactors_.executor(index), to,
                                                         "brokerd-" + std::to_string(node_id_) + "-http",
                                                         kLinkTimeoutMs, credentials_));
    return *links.back();
  }
  return *least;
}

asio::awaitable<std::optional<Bytes>> NodeLinks::call(int32_t node, int16_t api_key, int16_t version, Bytes body,
                                                      int64_t timeout_ms) {
  const int shard_index = net::current_shard();
  if (stopped_ || shard_index < 0 || static_cast<size_t>(shard_index) >= shards_.size()) co_return std::nullopt;
  const auto image = metadata_.image();
  const auto* b = image->broker(node);
  if (!b || b->host.empty() || b->port <= 0) co_return std::nullopt;
  Shard& shard = *shards_[static_cast<size_t>(shard_index)];
  // A broker that moved (a new port after a restart) gets fresh connections.
  auto& existing = shard.links[node];
  if (!existing.empty() && (existing.front()->peer().host != b->host || existing.front()->peer().port != b->port))
    existing.clear();
  quorum::PeerClient& link = pick(shard, static_cast<size_t>(shard_index), *b);

  struct Wait {
    explicit Wait(asio::any_io_executor ex) : timer(ex) {}
    asio::steady_timer timer;
    std::optional<Bytes> answer;
    bool done = false;
  };
  auto wait = std::make_shared<Wait>(co_await asio::this_coro::executor);
  wait->timer.expires_after(std::chrono::milliseconds(timeout_ms));
  link.send(api_key, version, std::move(body), [wait](std::optional<Bytes> answer, bool) {
    wait->answer = std::move(answer);
    wait->done = true;
    wait->timer.cancel();
  });
  co_await wait->timer.async_wait(asio::as_tuple(asio::use_awaitable));
  if (!wait->done) {
    // Silent past the deadline: this connection is not to be trusted with the next request.
    link.expire(INT64_MAX / 2);
    co_return std::nullopt;
  }
  co_return std::move(wait->answer);
}

void NodeLinks::stop() {
  std::vector<std::future<void>> done;
  for (size_t i = 0; i < shards_.size(); ++i) {
    auto closed = std::make_shared<std::promise<void>>();
    done.push_back(closed->get_future());
    asio::post(reactors_.executor(i), [this, i, closed] {
      stopped_ = true;
      for (auto& [node, links] : shards_[i]->links)
        for (auto& link : links) link->close();
      closed->set_value();
    });
  }
  for (auto& f : done) f.wait_for(std::chrono::seconds(5));
}

}  // namespace brokerd::http
