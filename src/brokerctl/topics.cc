// topics create | list | describe | alter-config | add-partitions | delete
#include <algorithm>

#include "brokerctl/checks.h"
#include "brokerctl/commands.h"

namespace brokerctl {
namespace {

void print_done(Context& ctx, const std::string& topic, const std::string& action, Json extra = Json::object()) {
  if (ctx.json()) {
    Json j = Json::object();
    j.set("topic", topic).set("result", action);
    print_json(extra.dump() == "{}" ? j : j.set("details", std::move(extra)));
  } else {
    print_text("Topic '" + topic + "' " + action + ".");
  }
}

void create(Context& ctx) {
  const auto& a = ctx.args;
  std::string name = a.positionals()[0];
  check_topic_name(name);
  int32_t partitions = static_cast<int32_t>(a.get_int("partitions", 1, 1'000'000).value_or(-1));
  int16_t rf = static_cast<int16_t>(a.get_int("replication-factor", 1, INT16_MAX).value_or(-1));
  auto configs = parse_topic_configs(a.all("config"), "config");

  proto::CreateTopicsRequest req;
  req.timeout_ms = ctx.timeout_ms;
  proto::CreateTopicsRequest::CreatableTopic t;
  t.name = name;
  t.num_partitions = partitions;
  t.replication_factor = rf;
  for (const auto& c : configs) {
    proto::CreateTopicsRequest::CreatableTopicConfig tc;
    tc.name = c.key;
    tc.value = c.value;
    t.configs.push_back(tc);
  }
  req.topics.push_back(t);
  // v4+ accepts -1 for the broker's default partitions and replication factor.
  auto resp = ctx.client().any().call<proto::CreateTopicsResponse>(req);
  if (resp.topics.empty()) throw CommandError("creating topic '" + name + "': empty response");
  const auto& r = resp.topics.front();
  check_error(r.error_code, "creating topic '" + name + "'", r.error_message);
  Json d = Json::object();
  d.set("topic_id", r.topic_id.to_string()).set("partitions", r.num_partitions).set("replication_factor", r.replication_factor);
  print_done(ctx, name, "created", d);
}

int replication_factor(const proto::MetadataResponse::MetadataResponseTopic& t) {
  size_t rf = 0;
  for (const auto& p : t.partitions) rf = std::max(rf, p.replica_nodes.size());
  return static_cast<int>(rf);
}

void list(Context& ctx) {
  auto md = ctx.client().metadata(std::nullopt);
  auto topics = md.topics;
  std::sort(topics.begin(), topics.end(), [](const auto& x, const auto& y) { return x.name < y.name; });
  if (ctx.json()) {
    Json arr = Json::array();
    for (const auto& t : topics) {
      Json j = Json::object();
      j.set("name", t.name).set("topic_id", t.topic_id.to_string()).set("internal", t.is_internal)
          .set("partitions", static_cast<int>(t.partitions.size())).set("replication_factor", replication_factor(t));
      arr.push(std::move(j));
    }
    print_json(arr);
    return;
  }
  Table table({"TOPIC", "PARTITIONS", "REPLICATION-FACTOR", "TOPIC-ID"});
  for (const auto& t : topics) {
    table.add({t.name.value_or(""), std::to_string(t.partitions.size()), std::to_string(replication_factor(t)),
               t.topic_id.to_string()});
  }
  print_text(table.render());
}

void describe(Context& ctx) {
  std::string name = ctx.args.positionals()[0];
  check_topic_name(name);
  auto t = ctx.client().topic(name);
  auto parts = t.partitions;
  std::sort(parts.begin(), parts.end(), [](const auto& x, const auto& y) { return x.partition_index < y.partition_index; });
  auto configs = describe_configs(ctx, 2, name);
  if (ctx.json()) {
    Json j = Json::object();
    j.set("name", name).set("topic_id", t.topic_id.to_string()).set("internal", t.is_internal)
        .set("partition_count", static_cast<int>(parts.size())).set("replication_factor", replication_factor(t));
    Json ps = Json::array();
    for (const auto& p : parts) {
      auto ids = [](const std::vector<int32_t>& v) { Json a = Json::array(); for (int32_t x : v) a.push(x); return a; };
      Json pj = Json::object();
      pj.set("partition", p.partition_index).set("leader", p.leader_id).set("leader_epoch", p.leader_epoch)
          .set("replicas", ids(p.replica_nodes)).set("isr", ids(p.isr_nodes)).set("offline", ids(p.offline_replicas));
      if (p.error_code) pj.set("error", describe_error(p.error_code));
      ps.push(std::move(pj));
    }
    j.set("partitions", std::move(ps));
    Json cs = Json::object();
    for (const auto& c : configs.configs) {
      Json cj = Json::object();
      cj.set("value", c.is_sensitive ? Json() : Json(c.value)).set("source", config_source_name(c.config_source))
          .set("read_only", c.read_only).set("sensitive", c.is_sensitive);
      cs.set(c.name, std::move(cj));
    }
    j.set("configs", std::move(cs));
    print_json(j);
    return;
  }
  std::string overrides;
  for (const auto& c : configs.configs) {
    if (c.config_source != 1) continue;  // only what was set on the topic, as kafka-topics shows
    if (!overrides.empty()) overrides += ",";
    overrides += c.name + "=" + (c.is_sensitive ? "(sensitive)" : c.value.value_or("null"));
  }
  std::string head = "Topic: " + name + "\tTopicId: " + t.topic_id.to_string() + "\tPartitionCount: " +
                     std::to_string(parts.size()) + "\tReplicationFactor: " + std::to_string(replication_factor(t)) +
                     "\tConfigs: " + overrides + "\n\n";
  Table table({"PARTITION", "LEADER", "REPLICAS", "ISR", "OFFLINE"});
  for (const auto& p : parts) {
    table.add({std::to_string(p.partition_index), p.leader_id < 0 ? "none" : std::to_string(p.leader_id),
               join(p.replica_nodes), join(p.isr_nodes), join(p.offline_replicas)});
  }
  print_text(head + table.render());
}

void alter_config(Context& ctx) {
  std::string name = ctx.args.positionals()[0];
  check_topic_name(name);
  alter_topic_configs(ctx, name, ctx.args.all("set"), ctx.args.all("delete"));
}

void add_partitions(Context& ctx) {
  std::string name = ctx.args.positionals()[0];
  check_topic_name(name);
  auto to = ctx.args.get_int("to", 1, 1'000'000);
  if (!to) throw UsageError("missing option --to N (the new total number of partitions)");
  proto::CreatePartitionsRequest req;
  req.timeout_ms = ctx.timeout_ms;
  proto::CreatePartitionsRequest::CreatePartitionsTopic t;
  t.name = name;
  t.count = static_cast<int32_t>(*to);
  t.assignments = std::nullopt;
  req.topics.push_back(t);
  auto resp = ctx.client().any().call<proto::CreatePartitionsResponse>(req);
  if (resp.results.empty()) throw CommandError("adding partitions to '" + name + "': empty response");
  check_error(resp.results.front().error_code, "adding partitions to '" + name + "'", resp.results.front().error_message);
  Json d = Json::object();
  d.set("partitions", static_cast<int>(*to));
  print_done(ctx, name, "now has " + std::to_string(*to) + " partitions", d);
}

void remove(Context& ctx) {
  std::string name = ctx.args.positionals()[0];
  check_topic_name(name);
  proto::DeleteTopicsRequest req;
  req.timeout_ms = ctx.timeout_ms;
  auto& conn = ctx.client().any();
  int16_t v = conn.pick_version(proto::DeleteTopicsRequest::api_key, 1, proto::DeleteTopicsRequest::max_version);
  if (v >= 6) {  // v6+ names topics by name or id
    proto::DeleteTopicsRequest::DeleteTopicState s;
    s.name = name;
    req.topics = {s};
  } else {
    req.topic_names = {name};
  }
  auto resp = conn.call_version<proto::DeleteTopicsResponse>(req, v);
  if (resp.responses.empty()) throw CommandError("deleting topic '" + name + "': empty response");
  check_error(resp.responses.front().error_code, "deleting topic '" + name + "'", resp.responses.front().error_message);
  print_done(ctx, name, "deleted");
}

}  // namespace

std::vector<Command> topic_commands() {
  return {
      {"topics", "create", "Create a topic.", {"NAME"}, 0,
       {{"partitions", "N", "number of partitions (default: the broker's num.partitions)"},
        {"replication-factor", "R", "replicas per partition (default: the broker's default.replication.factor)"},
        {"config", "KEY=VALUE", "a topic config, e.g. retention.ms=86400000", true}},
       "", create},
      {"topics", "list", "List topics.", {}, 0, {}, "", list},
      {"topics", "describe", "Show a topic's partitions, leaders, replicas, ISR and configs.", {"NAME"}, 0, {}, "",
       describe},
      {"topics", "alter-config", "Set or remove topic configs (IncrementalAlterConfigs).", {"NAME"}, 0,
       {{"set", "KEY=VALUE", "set a config", true}, {"delete", "KEY", "remove a config (back to the default)", true}},
       "", alter_config},
      {"topics", "add-partitions", "Grow a topic to N partitions.", {"NAME"}, 0,
       {{"to", "N", "the new total number of partitions"}}, "", add_partitions},
      {"topics", "delete", "Delete a topic and its data.", {"NAME"}, 0, {}, "", remove},
  };
}

}  // namespace brokerctl
