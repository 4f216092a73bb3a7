// partitions elect-leaders
#include "brokerd/protocol/error_code.h"
#include "brokerd/protocol/messages/elect_leaders_request.h"
#include "brokerd/protocol/messages/elect_leaders_response.h"

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
           elect_leaders}};
}

}  // namespace brokerctl
