// partitions elect-leaders, reassign, reassignments
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <map>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "brokerd/protocol/error_code.h"
#include "brokerd/protocol/messages/alter_partition_reassignments_request.h"
#include "brokerd/protocol/messages/alter_partition_reassignments_response.h"
#include "brokerd/protocol/messages/elect_leaders_request.h"
#include "brokerd/protocol/messages/elect_leaders_response.h"
#include "brokerd/protocol/messages/list_partition_reassignments_request.h"
#include "brokerd/protocol/messages/list_partition_reassignments_response.h"

#include "brokerctl/commands.h"

namespace brokerctl {
namespace {

void elect_leaders(Context& ctx) {
  const std::string type = ctx.args.get("type").value_or("preferred");
  if (type != "preferred" && type != "unclean") throw UsageError("--type is preferred or unclean, not '" + type + "'");
  const auto topic = ctx.args.get("topic");
  const bool all = ctx.args.flag("all-topic-partitions");
  if (topic.has_value() == all) throw UsageError("give --topic (with --partition, or all its partitions) or --all-topic-partitions");
  std::vector<int32_t> partitions;
  for (const auto& p : ctx.args.all("partition")) {
    auto n = parse_int(p, 0, INT32_MAX);
    if (!n) throw UsageError("--partition takes a partition number, not '" + p + "'");
    partitions.push_back(static_cast<int32_t>(*n));
  }
  if (!topic && !partitions.empty()) throw UsageError("--partition needs --topic");

  proto::ElectLeadersRequest req;
  req.election_type = type == "preferred" ? 0 : 1;
  req.timeout_ms = ctx.timeout_ms;
  if (topic) {
    if (partitions.empty())
      for (const auto& p : ctx.client().topic(*topic).partitions) partitions.push_back(p.partition_index);
    auto& t = req.topic_partitions.emplace().emplace_back();
    t.topic = *topic;
    t.partitions = partitions;
  } else {
    req.topic_partitions = std::nullopt;  // every partition
  }
  auto& conn = ctx.client().any();
  // Version 0 knows preferred elections only.
  auto resp = conn.call<proto::ElectLeadersResponse>(req);
  check_error(resp.error_code, "electing leaders");

  size_t failed = 0;
  Table table({"TOPIC", "PARTITION", "RESULT"});
  Json arr = Json::array();
  for (const auto& t : resp.replica_election_results) {
    for (const auto& p : t.partition_result) {
      const auto code = static_cast<proto::ErrorCode>(p.error_code);
      const bool ok = code == proto::ErrorCode::none;
      if (!ok && code != proto::ErrorCode::election_not_needed) ++failed;
      const std::string result = ok ? "elected" : describe_error(p.error_code, p.error_message);
      table.add({t.topic, std::to_string(p.partition_id), result});
      Json j = Json::object();
      j.set("topic", t.topic).set("partition", p.partition_id).set("error", ok ? Json() : Json(proto::error_name(code)));
      j.set("message", p.error_message);
      arr.push(std::move(j));
    }
  }
  if (ctx.json()) print_json(arr);
  else print_text(resp.replica_election_results.empty() ? "No partition needed an election.\n" : table.render());
  if (failed > 0) throw CommandError(std::to_string(failed) + " election(s) failed");
}

// One partition of a reassignment plan: Kafka's JSON ({"version": 1, "partitions": [{"topic":
// "t", "partition": 0, "replicas": [1, 2, 3]}, ...]}), read as YAML, of which it is a part.
struct PlannedPartition {
  std::string topic;
  int32_t partition = 0;
  std::vector<int32_t> replicas;
};

std::vector<PlannedPartition> read_plan(const std::string& path) {
  std::vector<PlannedPartition> plan;
  try {
    const YAML::Node root = YAML::LoadFile(path);
    const YAML::Node parts = root["partitions"];
    if (!parts || !parts.IsSequence()) throw UsageError(path + ": no \"partitions\" list");
    for (const auto& p : parts) {
      PlannedPartition e;
      e.topic = p["topic"].as<std::string>();
      e.partition = p["partition"].as<int32_t>();
      if (p["replicas"]) e.replicas = p["replicas"].as<std::vector<int32_t>>();
      plan.push_back(std::move(e));
    }
  } catch (const YAML::Exception& e) {
    throw UsageError(path + ": not a reassignment plan: " + e.what());
  }
  if (plan.empty()) throw UsageError(path + ": the plan names no partition");
  return plan;
}

using Ongoing = std::map<std::pair<std::string, int32_t>, proto::ListPartitionReassignmentsResponse::OngoingPartitionReassignment>;

// The reassignments in progress, of the plan's partitions or (no plan) of all.
Ongoing ongoing(Context& ctx, const std::vector<PlannedPartition>* plan) {
  proto::ListPartitionReassignmentsRequest req;
  req.timeout_ms = ctx.timeout_ms;
  if (plan) {
    req.topics.emplace();
    std::map<std::string, size_t> index;
    for (const auto& p : *plan) {
      auto [it, added] = index.try_emplace(p.topic, req.topics->size());
      if (added) req.topics->emplace_back().name = p.topic;
      (*req.topics)[it->second].partition_indexes.push_back(p.partition);
    }
  } else {
    req.topics = std::nullopt;
  }
  auto resp = ctx.client().any().call<proto::ListPartitionReassignmentsResponse>(req);
  check_error(resp.error_code, "listing reassignments", resp.error_message);
  Ongoing out;
  for (const auto& t : resp.topics)
    for (const auto& p : t.partitions) out[{t.name, p.partition_index}] = p;
  return out;
}

void reassign(Context& ctx) {
  const auto path = ctx.args.get("plan");
  if (!path) throw UsageError("--plan FILE is required");
  const auto plan = read_plan(*path);
  const bool cancel = ctx.args.flag("cancel");
  proto::AlterPartitionReassignmentsRequest req;
  req.timeout_ms = ctx.timeout_ms;
  std::map<std::string, size_t> index;
  for (const auto& p : plan) {
    if (!cancel && p.replicas.empty()) throw UsageError(fmt::format("{}-{}: the plan gives no replicas", p.topic, p.partition));
    auto [it, added] = index.try_emplace(p.topic, req.topics.size());
    if (added) req.topics.emplace_back().name = p.topic;
    auto& part = req.topics[it->second].partitions.emplace_back();
    part.partition_index = p.partition;
    if (!cancel) part.replicas = p.replicas;
  }
  auto resp = ctx.client().any().call<proto::AlterPartitionReassignmentsResponse>(req);
  check_error(resp.error_code, cancel ? "cancelling reassignments" : "reassigning partitions", resp.error_message);
  size_t failed = 0;
  Table table({"TOPIC", "PARTITION", "RESULT"});
  Json arr = Json::array();
  for (const auto& t : resp.responses) {
    for (const auto& p : t.partitions) {
      const bool ok = p.error_code == 0;
      if (!ok) ++failed;
      table.add({t.name, std::to_string(p.partition_index),
                 ok ? (cancel ? "cancelled" : "accepted") : describe_error(p.error_code, p.error_message)});
      Json j = Json::object();
      j.set("topic", t.name).set("partition", p.partition_index);
      j.set("error", ok ? Json() : Json(proto::error_name(static_cast<proto::ErrorCode>(p.error_code))));
      j.set("message", p.error_message);
      arr.push(std::move(j));
    }
  }
  if (ctx.json()) print_json(arr);
  else print_text(table.render());
  if (failed > 0) throw CommandError(std::to_string(failed) + " partition(s) refused");
  if (cancel || ctx.args.flag("no-wait")) return;

  // Progress until every partition of the plan has moved (bounded by --wait-ms).
  int64_t wait_ms = 600000;
  if (auto w = ctx.args.get("wait-ms")) {
    auto n = parse_int(*w, 0, INT64_MAX);
    if (!n) throw UsageError("--wait-ms takes milliseconds, not '" + *w + "'");
    wait_ms = *n;
  }
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::milliseconds(wait_ms);
  auto last_report = start;
  while (true) {
    const auto left = ongoing(ctx, &plan);
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - start).count();
    if (left.empty()) {
      if (!ctx.json()) print_text(fmt::format("Reassignment of {} partition(s) complete after {:.1f} s.", plan.size(), elapsed));
      return;
    }
    if (now >= deadline)
      throw CommandError(fmt::format("{} partition(s) still moving after {:.0f} s (they go on: see 'brokerctl partitions "
                                     "reassignments')", left.size(), elapsed));
    if (!ctx.json() && now - last_report >= std::chrono::seconds(5)) {
      last_report = now;
      for (const auto& [tp, p] : left)
        print_text(fmt::format("{:.0f} s: {}-{} moving: replicas {}, adding {}, removing {}", elapsed, tp.first, tp.second,
                               fmt::join(p.replicas, ","), fmt::join(p.adding_replicas, ","),
                               fmt::join(p.removing_replicas, ",")));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

void reassignments(Context& ctx) {
  const auto left = ongoing(ctx, nullptr);
  Table table({"TOPIC", "PARTITION", "REPLICAS", "ADDING", "REMOVING"});
  Json arr = Json::array();
  for (const auto& [tp, p] : left) {
    table.add({tp.first, std::to_string(tp.second), fmt::format("{}", fmt::join(p.replicas, ",")),
               fmt::format("{}", fmt::join(p.adding_replicas, ",")), fmt::format("{}", fmt::join(p.removing_replicas, ","))});
    Json j = Json::object();
    Json replicas = Json::array(), adding = Json::array(), removing = Json::array();
    for (int32_t r : p.replicas) replicas.push(r);
    for (int32_t r : p.adding_replicas) adding.push(r);
    for (int32_t r : p.removing_replicas) removing.push(r);
    j.set("topic", tp.first).set("partition", tp.second).set("replicas", std::move(replicas));
    j.set("adding", std::move(adding)).set("removing", std::move(removing));
    arr.push(std::move(j));
  }
  if (ctx.json()) print_json(arr);
  else print_text(left.empty() ? "No reassignment is in progress.\n" : table.render());
}

}  // namespace

std::vector<Command> partition_commands() {
  return {{"partitions", "elect-leaders",
           "Elect leaders: give partitions back to their preferred replicas, or an unclean leader to offline ones.",
           {},
           0,
           {{"type", "preferred|unclean", "the election (default preferred)"},
            {"topic", "NAME", "the topic whose partitions to elect"},
            {"partition", "N", "one partition of --topic (default: all of them)", true},
            {"all-topic-partitions", "", "every partition of every topic"}},
           "Preferred: the first replica of each partition leads again when it is live and in sync.\n"
           "Unclean: a partition with no live leader gets one, from outside the in-sync replicas if need be\n"
           "(records acknowledged only by the lost replicas are lost).",
           elect_leaders},
          {"partitions", "reassign",
           "Move partitions' replicas to other brokers, following a plan, and show the progress.",
           {},
           0,
           {{"plan", "FILE", "the plan: Kafka's reassignment JSON"},
            {"cancel", "", "cancel the plan's reassignments instead (the replicas go back)"},
            {"no-wait", "", "return once the controller accepted the plan"},
            {"wait-ms", "MS", "how long to follow the progress (default 600000)"}},
           "The plan: {\"version\": 1, \"partitions\": [{\"topic\": \"orders\", \"partition\": 0, \"replicas\": [4, 2, 3]}]}.\n"
           "New replicas copy the partition from its leader; once all of a partition's new replicas are in sync,\n"
           "the old ones leave (a leader that leaves hands over first). Writes and reads go on meanwhile.",
           reassign},
          {"partitions", "reassignments",
           "List the reassignments in progress.",
           {},
           0,
           {},
           "",
           reassignments}};
}

}  // namespace brokerctl
