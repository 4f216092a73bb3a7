// configs describe | alter, and the config helpers topics.cc shares.
#include <algorithm>

#include "brokerctl/checks.h"
#include "brokerctl/commands.h"

namespace brokerctl {

std::string config_source_name(int8_t source) {
  switch (source) {
    case 1: return "DYNAMIC_TOPIC_CONFIG";
    case 2: return "DYNAMIC_BROKER_CONFIG";
    case 3: return "DYNAMIC_DEFAULT_BROKER_CONFIG";
    case 4: return "STATIC_BROKER_CONFIG";
    case 5: return "DEFAULT_CONFIG";
    case 6: return "DYNAMIC_BROKER_LOGGER_CONFIG";
    case 7: return "CLIENT_METRICS_CONFIG";
    case 8: return "GROUP_CONFIG";
    default: return "UNKNOWN";
  }
}

namespace {

std::string entity_label(int8_t type, const std::string& name) {
  if (type == 2) return "topic '" + name + "'";
  return name.empty() ? std::string("the cluster-wide broker defaults") : "broker " + name;
}

// A broker's own configs are asked of and changed through that broker; the rest through any.
Connection& connection_for(Context& ctx, int8_t type, const std::string& name) {
  if (type == 4 && !name.empty()) return ctx.client().node(static_cast<int32_t>(*parse_int(name, 0, INT32_MAX)));
  return ctx.client().any();
}

}  // namespace

proto::DescribeConfigsResponse::DescribeConfigsResult describe_configs(Context& ctx, int8_t resource_type,
                                                                       const std::string& name) {
  proto::DescribeConfigsRequest req;
  proto::DescribeConfigsRequest::DescribeConfigsResource r;
  r.resource_type = resource_type;
  r.resource_name = name;
  r.configuration_keys = std::nullopt;  // all
  req.resources.push_back(r);
  auto resp = connection_for(ctx, resource_type, name).call<proto::DescribeConfigsResponse>(req);
  const std::string what = "describing configs of " + entity_label(resource_type, name);
  if (resp.results.empty()) throw CommandError(what + ": empty response");
  auto result = resp.results.front();
  check_error(result.error_code, what, result.error_message);
  std::sort(result.configs.begin(), result.configs.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return result;
}

namespace {

// IncrementalAlterConfigs of one resource: SET each change, DELETE each key.
void alter_configs(Context& ctx, int8_t type, const std::string& name, const std::vector<ConfigChange>& changes,
                   const std::vector<std::string>& del) {
  if (changes.empty() && del.empty()) throw UsageError("nothing to change: give --set KEY=VALUE or --delete KEY");
  proto::IncrementalAlterConfigsRequest req;
  proto::IncrementalAlterConfigsRequest::AlterConfigsResource r;
  r.resource_type = type;
  r.resource_name = name;
  for (const auto& c : changes) {
    proto::IncrementalAlterConfigsRequest::AlterableConfig a;
    a.name = c.key;
    a.config_operation = 0;  // SET
    a.value = c.value;
    r.configs.push_back(a);
  }
  for (const auto& k : del) {
    proto::IncrementalAlterConfigsRequest::AlterableConfig a;
    a.name = k;
    a.config_operation = 1;  // DELETE
    a.value = std::nullopt;
    r.configs.push_back(a);
  }
  req.resources.push_back(r);
  auto resp = connection_for(ctx, type, name).call<proto::IncrementalAlterConfigsResponse>(req);
  const std::string what = "altering configs of " + entity_label(type, name);
  if (resp.responses.empty()) throw CommandError(what + ": empty response");
  check_error(resp.responses.front().error_code, what, resp.responses.front().error_message);
  if (ctx.json()) {
    Json j = Json::object();
    Json s = Json::object();
    for (const auto& c : changes) s.set(c.key, c.value);
    Json d = Json::array();
    for (const auto& k : del) d.push(k);
    j.set("entity_type", type == 2 ? "topics" : "brokers").set("entity_name", name).set("set", std::move(s))
        .set("deleted", std::move(d));
    print_json(j);
  } else {
    print_text("Updated configs of " + entity_label(type, name) + ".");
  }
}

}  // namespace

void alter_topic_configs(Context& ctx, const std::string& topic, const std::vector<std::string>& set,
                         const std::vector<std::string>& del) {
  auto changes = parse_topic_configs(set, "set");
  check_topic_config_keys(del);
  alter_configs(ctx, 2, topic, changes, del);
}

namespace {

int8_t entity_type(Context& ctx) {
  auto type = ctx.args.get("entity-type");
  if (!type) throw UsageError("missing option --entity-type (topics or brokers)");
  if (*type == "topics" || *type == "topic") return 2;
  if (*type == "brokers" || *type == "broker") return 4;
  throw UsageError("--entity-type must be topics or brokers, got '" + *type + "'");
}

// --entity-default names the cluster-wide broker defaults (the resource named "").
std::string entity_name(Context& ctx, int8_t type) {
  auto name = ctx.args.get("entity-name");
  if (ctx.args.flag("entity-default")) {
    if (type != 4) throw UsageError("--entity-default goes with --entity-type brokers");
    if (name) throw UsageError("give --entity-name or --entity-default, not both");
    return "";
  }
  if (!name) throw UsageError("missing option --entity-name" + std::string(type == 4 ? " (or --entity-default)" : ""));
  if (type == 2) check_topic_name(*name);
  if (type == 4 && !parse_int(*name, 0, INT32_MAX)) throw UsageError("a broker's --entity-name is its node id, got '" + *name + "'");
  return *name;
}

void describe(Context& ctx) {
  int8_t type = entity_type(ctx);
  std::string name = entity_name(ctx, type);
  auto result = describe_configs(ctx, type, name);
  if (ctx.json()) {
    Json arr = Json::array();
    for (const auto& c : result.configs) {
      Json j = Json::object();
      j.set("name", c.name).set("value", c.is_sensitive ? Json() : Json(c.value))
          .set("source", config_source_name(c.config_source)).set("read_only", c.read_only)
          .set("default", c.is_default).set("sensitive", c.is_sensitive);
      arr.push(std::move(j));
    }
    Json out = Json::object();
    out.set("entity_type", type == 2 ? "topics" : "brokers").set("entity_name", name).set("configs", std::move(arr));
    print_json(out);
    return;
  }
  Table table({"NAME", "VALUE", "SOURCE", "READ-ONLY"});
  for (const auto& c : result.configs) {
    table.add({c.name, c.is_sensitive ? "(sensitive)" : c.value.value_or("null"), config_source_name(c.config_source),
               c.read_only ? "yes" : "no"});
  }
  print_text(table.render());
}

void alter(Context& ctx) {
  int8_t type = entity_type(ctx);
  std::string name = entity_name(ctx, type);
  if (type == 2) return alter_topic_configs(ctx, name, ctx.args.all("set"), ctx.args.all("delete"));
  alter_configs(ctx, type, name, parse_broker_configs(ctx.args.all("set"), "set", name.empty()), ctx.args.all("delete"));
}

}  // namespace

std::vector<Command> config_commands() {
  std::vector<OptionSpec> entity = {{"entity-type", "topics|brokers", "what to describe"},
                                    {"entity-name", "NAME", "the topic name, or the broker's node id"},
                                    {"entity-default", "", "the cluster-wide dynamic broker defaults"}};
  auto alter_opts = std::vector<OptionSpec>{{"entity-type", "topics|brokers", "what to change"},
                                            {"entity-name", "NAME", "the topic name, or the broker's node id"},
                                            {"entity-default", "", "the cluster-wide dynamic broker defaults"},
                                            {"set", "KEY=VALUE", "set a config", true},
                                            {"delete", "KEY", "remove a config (back to the default)", true}};
  return {
      {"configs", "describe", "Show the configs of a topic or a broker, with their sources.", {}, 0, entity, "",
       describe},
      {"configs", "alter", "Set or remove topic configs, or dynamic broker configs (IncrementalAlterConfigs).", {}, 0, alter_opts, "", alter},
  };
}

}  // namespace brokerctl
