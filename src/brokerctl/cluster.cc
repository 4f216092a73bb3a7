// cluster describe, cluster quorum
#include <algorithm>
#include <chrono>
#include <optional>
#include <tuple>

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

const char* kMetadataTopic = "__cluster_metadata";

proto::DescribeQuorumRequest metadata_quorum_request() {
  proto::DescribeQuorumRequest req;
  auto& t = req.topics.emplace_back();
  t.topic_name = kMetadataTopic;
  t.partitions.emplace_back().partition_index = 0;
  return req;
}

// The leader of the metadata quorum as `conn` reports it; nullopt when it does not answer
// DescribeQuorum or knows no leader.
std::optional<int32_t> quorum_leader(Connection& conn) {
  if (!conn.supports(proto::DescribeQuorumRequest::api_key)) return std::nullopt;
  try {
    auto resp = conn.call<proto::DescribeQuorumResponse>(metadata_quorum_request());
    if (resp.error_code != 0 || resp.topics.size() != 1 || resp.topics[0].partitions.size() != 1) return std::nullopt;
    const int32_t leader = resp.topics[0].partitions[0].leader_id;
    return leader >= 0 ? std::optional<int32_t>(leader) : std::nullopt;
  } catch (const CommandError&) {
    return std::nullopt;  // e.g. not authorized to describe the quorum
  }
}

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
    for (const auto& b : resp.brokers) brokers.push_back({b.broker_id, b.host, b.port, b.rack, b.is_fenced});
  } else {
    auto md = ctx.client().metadata(std::vector<std::string>{});
    cluster_id = md.cluster_id.value_or("");
    for (const auto& b : md.brokers) brokers.push_back({b.node_id, b.host, b.port, b.rack});
  }
  std::sort(brokers.begin(), brokers.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  // Partitions without a leader, and with fewer in-sync replicas than replicas.
  struct Degraded {
    std::string topic;
    int32_t partition;
    std::vector<int32_t> replicas, isr;
  };
  std::vector<Degraded> offline, under_replicated;
  for (const auto& t : ctx.client().metadata(std::nullopt).topics) {
    for (const auto& p : t.partitions) {
      Degraded d{t.name.value_or(""), p.partition_index, p.replica_nodes, p.isr_nodes};
      if (p.leader_id < 0) offline.push_back(std::move(d));
      else if (p.isr_nodes.size() < p.replica_nodes.size()) under_replicated.push_back(std::move(d));
    }
  }
  auto by_name = [](const Degraded& a, const Degraded& b) { return std::tie(a.topic, a.partition) < std::tie(b.topic, b.partition); };
  std::sort(offline.begin(), offline.end(), by_name);
  std::sort(under_replicated.begin(), under_replicated.end(), by_name);
  // The quorum's leader. Brokers name themselves or another live broker as controller in
  // DescribeCluster and Metadata, as Kafka's do (they forward what clients send it), so those
  // answers are not used; -1 when no leader is known. Asked last: a broker that cannot reach
  // the quorum answers only when its forward times out.
  if (auto leader = quorum_leader(conn)) controller = *leader;
  auto ids = [](const std::vector<int32_t>& v) {
    std::string out;
    for (int32_t id : v) out += (out.empty() ? "" : ",") + std::to_string(id);
    return out;
  };
  if (ctx.json()) {
    Json arr = Json::array();
    for (const auto& b : brokers) {
      Json j = Json::object();
      j.set("id", b.id).set("host", b.host).set("port", b.port).set("rack", b.rack).set("fenced", b.fenced);
      arr.push(std::move(j));
    }
    Json out = Json::object();
    out.set("cluster_id", cluster_id).set("controller", controller).set("brokers", std::move(arr));
    const std::pair<const char*, const std::vector<Degraded>*> lists[] = {{"offline_partitions", &offline},
                                                                          {"under_replicated_partitions", &under_replicated}};
    for (const auto& [key, list] : lists) {
      Json parts = Json::array();
      for (const auto& d : *list) {
        Json j = Json::object();
        Json replicas = Json::array(), isr = Json::array();
        for (int32_t r : d.replicas) replicas.push(r);
        for (int32_t r : d.isr) isr.push(r);
        j.set("topic", d.topic).set("partition", d.partition).set("replicas", std::move(replicas)).set("isr", std::move(isr));
        parts.push(std::move(j));
      }
      out.set(key, std::move(parts));
    }
    print_json(out);
    return;
  }
  Table table({"ID", "HOST:PORT", "RACK", "CONTROLLER", "FENCED"});
  for (const auto& b : brokers) {
    table.add({std::to_string(b.id), b.host + ":" + std::to_string(b.port), b.rack.value_or("-"),
               b.id == controller ? "yes" : "", b.fenced ? "yes" : ""});
  }
  std::string text = "Cluster ID: " + cluster_id + "\nController: " + std::to_string(controller) + "\n\n" + table.render();
  text += "\nOffline partitions: " + std::to_string(offline.size()) +
          "\nUnder-replicated partitions: " + std::to_string(under_replicated.size()) + "\n";
  if (!offline.empty() || !under_replicated.empty()) {
    Table parts({"TOPIC", "PARTITION", "STATE", "REPLICAS", "ISR"});
    for (const auto& d : offline) parts.add({d.topic, std::to_string(d.partition), "offline", ids(d.replicas), ids(d.isr)});
    for (const auto& d : under_replicated)
      parts.add({d.topic, std::to_string(d.partition), "under-replicated", ids(d.replicas), ids(d.isr)});
    text += "\n" + parts.render();
  }
  print_text(text);
}

// DescribeQuorum of the metadata partition, from a controller listener
// (--bootstrap-controller) or from a broker (--bootstrap-server, the default), which
// forwards it to the quorum's leader, as kafka-metadata-quorum asks either.
void quorum(Context& ctx) {
  const auto controllers = ctx.args.get("bootstrap-controller");
  if (controllers && ctx.args.get("bootstrap-server"))
    throw UsageError("give --bootstrap-server or --bootstrap-controller, not both");
  const auto req = metadata_quorum_request();
  auto answer = [&](Connection& conn) {
    auto resp = conn.call<proto::DescribeQuorumResponse>(req);
    check_error(resp.error_code, "describing the quorum", resp.error_message);
    if (resp.topics.size() != 1 || resp.topics[0].partitions.size() != 1)
      throw CommandError("DescribeQuorum answered without the metadata partition");
    return resp;
  };
  auto ask = [&](const Endpoint& e) {
    Connection conn(e, ctx.timeout_ms, ctx.security);
    return answer(conn);
  };
  if (controllers) ctx.bootstrap = parse_endpoints(*controllers);
  auto resp = answer(ctx.client().any());
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
           {{"bootstrap-controller", "HOST:PORT[,...]", "controller listeners of the quorum, instead of --bootstrap-server"}},
           "Asks a broker (--bootstrap-server), which forwards the request to the quorum's leader, or a\n"
           "controller listener (--bootstrap-controller).",
           quorum}};
}

}  // namespace brokerctl
