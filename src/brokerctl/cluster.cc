// cluster describe, cluster quorum
#include <algorithm>
#include <chrono>

#include "brokerd/protocol/messages/describe_quorum_request.h"
#include "brokerd/protocol/messages/describe_quorum_response.h"

#include "brokerctl/commands.h"

namespace brokerctl {
namespace {

struct BrokerInfo {
  int32_t id;
  std::string host;
  int32_t port;
  std::optional<std::string> rack;
  bool fenced = false;  // known from DescribeCluster v2 only; older answers list unfenced brokers
};

void describe(Context& ctx) {
  auto& conn = ctx.client().any();
  std::string cluster_id;
  int32_t controller = -1;
  std::vector<BrokerInfo> brokers;
  if (conn.supports(proto::DescribeClusterRequest::api_key)) {
    proto::DescribeClusterRequest req;
    req.include_fenced_brokers = true;  // v2: registered brokers that do not serve, marked
    auto resp = conn.call<proto::DescribeClusterResponse>(req);
    check_error(resp.error_code, "describing the cluster", resp.error_message);
    cluster_id = resp.cluster_id;
    controller = resp.controller_id;
    for (const auto& b : resp.brokers) brokers.push_back({b.broker_id, b.host, b.port, b.rack, b.is_fenced});
  } else {
    auto md = ctx.client().metadata(std::vector<std::string>{});
    cluster_id = md.cluster_id.value_or("");
    controller = md.controller_id;
    for (const auto& b : md.brokers) brokers.push_back({b.node_id, b.host, b.port, b.rack});
  }
  std::sort(brokers.begin(), brokers.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  if (ctx.json()) {
    Json arr = Json::array();
    for (const auto& b : brokers) {
      Json j = Json::object();
      j.set("id", b.id).set("host", b.host).set("port", b.port).set("rack", b.rack).set("fenced", b.fenced);
      arr.push(std::move(j));
    }
    Json out = Json::object();
    out.set("cluster_id", cluster_id).set("controller", controller).set("brokers", std::move(arr));
    print_json(out);
    return;
  }
  Table table({"ID", "HOST:PORT", "RACK", "CONTROLLER", "FENCED"});
  for (const auto& b : brokers) {
    table.add({std::to_string(b.id), b.host + ":" + std::to_string(b.port), b.rack.value_or("-"),
               b.id == controller ? "yes" : "", b.fenced ? "yes" : ""});
  }
  print_text("Cluster ID: " + cluster_id + "\nController: " + std::to_string(controller) + "\n\n" + table.render());
}

const char* kMetadataTopic = "__cluster_metadata";

// DescribeQuorum of the metadata partition, from a controller listener.
void quorum(Context& ctx) {
  auto at = ctx.args.get("bootstrap-controller");
  if (!at) throw UsageError("cluster quorum needs --bootstrap-controller HOST:PORT (a controller listener)");
  proto::DescribeQuorumRequest req;
  auto& t = req.topics.emplace_back();
  t.topic_name = kMetadataTopic;
  t.partitions.emplace_back().partition_index = 0;
  auto ask = [&](const Endpoint& e) {
    Connection conn(e, ctx.timeout_ms);
    auto resp = conn.call<proto::DescribeQuorumResponse>(req);
    check_error(resp.error_code, "describing the quorum", resp.error_message);
    if (resp.topics.size() != 1 || resp.topics[0].partitions.size() != 1)
      throw CommandError("DescribeQuorum answered without the metadata partition");
    return resp;
  };
  auto resp = ask(parse_endpoint(*at));
  // Only the leader describes the quorum; a follower names it and the voters' endpoints.
  constexpr int16_t kNotLeader = 6;
  if (const auto& first = resp.topics[0].partitions[0]; first.error_code == kNotLeader && first.leader_id >= 0) {
    for (const auto& n : resp.nodes) {
      if (n.node_id == first.leader_id && !n.listeners.empty()) {
        resp = ask(Endpoint{n.listeners[0].host, n.listeners[0].port});
        break;
      }
    }
  }
  const auto& p = resp.topics[0].partitions[0];
  check_error(p.error_code, "describing the quorum", p.error_message);
  const int64_t hw = p.high_watermark;
  auto lag = [hw](int64_t leo) { return leo >= 0 && hw >= 0 ? std::max<int64_t>(hw - leo, 0) : -1; };
  if (ctx.json()) {
    auto replicas = [&](const auto& list) {
      Json arr = Json::array();
      for (const auto& r : list) {
        Json j = Json::object();
        j.set("id", r.replica_id).set("log_end_offset", r.log_end_offset).set("lag", lag(r.log_end_offset));
        j.set("last_fetch_timestamp", r.last_fetch_timestamp).set("last_caught_up_timestamp", r.last_caught_up_timestamp);
        arr.push(std::move(j));
      }
      return arr;
    };
    Json out = Json::object();
    out.set("leader", p.leader_id).set("epoch", p.leader_epoch).set("high_watermark", hw);
    out.set("voters", replicas(p.current_voters)).set("observers", replicas(p.observers));
    print_json(out);
    return;
  }
  Table table({"ID", "ROLE", "LOG END", "LAG", "LAST FETCH (ms ago)"});
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch()).count();
  auto add = [&](const auto& list, const char* role) {
    for (const auto& r : list) {
      table.add({std::to_string(r.replica_id), r.replica_id == p.leader_id ? "leader" : role,
                 std::to_string(r.log_end_offset), std::to_string(lag(r.log_end_offset)),
                 r.last_fetch_timestamp >= 0 ? std::to_string(now - r.last_fetch_timestamp) : "-"});
    }
  };
  add(p.current_voters, "follower");
  add(p.observers, "observer");
  print_text("Leader: " + std::to_string(p.leader_id) + "\nEpoch: " + std::to_string(p.leader_epoch) +
             "\nHigh watermark: " + std::to_string(hw) + "\n\n" + table.render());
}

}  // namespace

std::vector<Command> cluster_commands() {
  return {{"cluster", "describe", "Show the cluster id, the controller and the brokers.", {}, 0, {}, "", describe},
          {"cluster", "quorum", "Show the metadata quorum: leader, epoch, high watermark, each replica's lag.", {}, 0,
           {{"bootstrap-controller", "HOST:PORT", "a controller listener of the quorum"}}, "", quorum}};
}

}  // namespace brokerctl
