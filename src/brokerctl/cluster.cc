// cluster describe
#include <algorithm>

#include "brokerctl/commands.h"

namespace brokerctl {
namespace {

struct BrokerInfo {
  int32_t id;
  std::string host;
  int32_t port;
  std::optional<std::string> rack;
};

void describe(Context& ctx) {
  auto& conn = ctx.client().any();
  std::string cluster_id;
  int32_t controller = -1;
  std::vector<BrokerInfo> brokers;
  if (conn.supports(proto::DescribeClusterRequest::api_key)) {
    proto::DescribeClusterRequest req;
    auto resp = conn.call<proto::DescribeClusterResponse>(req);
    check_error(resp.error_code, "describing the cluster", resp.error_message);
    cluster_id = resp.cluster_id;
    controller = resp.controller_id;
    for (const auto& b : resp.brokers) brokers.push_back({b.broker_id, b.host, b.port, b.rack});
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
      j.set("id", b.id).set("host", b.host).set("port", b.port).set("rack", b.rack);
      arr.push(std::move(j));
    }
    Json out = Json::object();
    out.set("cluster_id", cluster_id).set("controller", controller).set("brokers", std::move(arr));
    print_json(out);
    return;
  }
  Table table({"ID", "HOST:PORT", "RACK", "CONTROLLER"});
  for (const auto& b : brokers) {
    table.add({std::to_string(b.id), b.host + ":" + std::to_string(b.port), b.rack.value_or("-"),
               b.id == controller ? "yes" : ""});
  }
  print_text("Cluster ID: " + cluster_id + "\nController: " + std::to_string(controller) + "\n\n" + table.render());
}

}  // namespace

std::vector<Command> cluster_commands() {
  return {{"cluster", "describe", "Show the cluster id, the controller and the brokers.", {}, 0, {}, "", describe}};
}

}  // namespace brokerctl
