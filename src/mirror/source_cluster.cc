#include "source_cluster.h"

#include <stdexcept>

#include "brokerd/protocol/messages/metadata_request.h"
#include "brokerd/protocol/messages/metadata_response.h"

namespace brokerd::mirror {

std::vector<quorum::Voter> parse_bootstrap(const std::string& servers) {
  std::vector<quorum::Voter> out;
  size_t start = 0;
  while (start <= servers.size()) {
    size_t comma = servers.find(',', start);
    std::string entry = servers.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? servers.size() + 1 : comma + 1;
    if (entry.empty()) continue;
    size_t colon = entry.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == entry.size())
      throw std::invalid_argument("bootstrap server '" + entry + "' is not host:port");
    quorum::Voter v;
    v.id = -1 - static_cast<int32_t>(out.size());
    v.host = entry.substr(0, colon);
    if (v.host.size() > 2 && v.host.front() == '[' && v.host.back() == ']') v.host = v.host.substr(1, v.host.size() - 2);
    int port = 0;
    try {
      port = std::stoi(entry.substr(colon + 1));
    } catch (const std::exception&) {
      port = 0;
    }
    if (port <= 0 || port > 65535) throw std::invalid_argument("bootstrap server '" + entry + "' has no valid port");
    v.port = static_cast<uint16_t>(port);
    out.push_back(std::move(v));
  }
  if (out.empty()) throw std::invalid_argument("no bootstrap server given");
  return out;
}

SourceCluster::SourceCluster(const std::string& bootstrap, std::string client_id, int timeout_ms,
                             security::ClientCredentials credentials)
    : bootstrap_(parse_bootstrap(bootstrap)),
      client_id_(std::move(client_id)),
      timeout_ms_(timeout_ms),
      credentials_(std::move(credentials)) {}

std::optional<SharedBytes> SourceCluster::send(const quorum::Voter& to, int16_t api, int16_t version, const Bytes& body,
                                               std::string& error) {
  auto& ch = channels_[to.id];
  if (!ch.client || !(ch.endpoint == to)) {
    ch.endpoint = to;
    ch.client = std::make_unique<controller::ControllerClient>(client_id_, timeout_ms_, credentials_);
  }
  auto answer = ch.client->call(to, api, version, body);
  const std::string at = to.host + ":" + std::to_string(to.port);
  if (!answer) error = ch.client->refusal().empty() ? "no answer from " + at : ch.client->refusal();
  return answer;
}

void SourceCluster::drop(const quorum::Voter& to) {
  auto it = channels_.find(to.id);
  if (it != channels_.end() && it->second.client) it->second.client->close();
}

std::optional<SourceMetadata> SourceCluster::metadata(std::string& error) {
  constexpr int16_t kVersion = 12;
  protocol::MetadataRequest req;
  req.topics = std::nullopt;  // every topic
  req.allow_auto_topic_creation = false;
  // Known brokers first (the bootstrap list may name a load balancer), then the bootstrap.
  std::vector<quorum::Voter> order;
  for (const auto& [id, v] : known_) order.push_back(v);
  order.insert(order.end(), bootstrap_.begin(), bootstrap_.end());
  for (const auto& to : order) {
    auto resp = call<protocol::MetadataResponse>(to, kVersion, req, error);
    if (!resp) continue;
    SourceMetadata out;
    for (const auto& b : resp->brokers) out.brokers[b.node_id] = quorum::Voter{b.node_id, b.host, static_cast<uint16_t>(b.port)};
    for (const auto& t : resp->topics) {
      if (!t.name || t.is_internal) continue;
      SourceTopic st;
      st.name = *t.name;
      st.id = t.topic_id;
      st.error = t.error_code;
      for (const auto& p : t.partitions) {
        if (p.partition_index < 0 || p.partition_index > 100000) continue;
        if (st.leaders.size() <= static_cast<size_t>(p.partition_index)) st.leaders.resize(p.partition_index + 1, -1);
        st.leaders[static_cast<size_t>(p.partition_index)] = p.leader_id;
      }
      out.topics[st.name] = std::move(st);
    }
    known_ = out.brokers;
    error.clear();
    return out;
  }
  return std::nullopt;
}

}  // namespace brokerd::mirror
