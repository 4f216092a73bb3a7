// quotas describe, alter: client quotas (KIP-546) of users, client ids or both, as Kafka's
// kafka-configs --entity-type users|clients sets them.
#include <fmt/format.h>

#include "brokerd/protocol/messages/alter_client_quotas_request.h"
#include "brokerd/protocol/messages/alter_client_quotas_response.h"
#include "brokerd/protocol/messages/describe_client_quotas_request.h"
#include "brokerd/protocol/messages/describe_client_quotas_response.h"

#include "brokerctl/commands.h"

namespace brokerctl {
namespace {

constexpr const char* kDefaultName = "<default>";

// --user NAME and --client-id NAME ("<default>", or --user-default and --client-id-default,
// for the default entity), in that order.
std::vector<std::pair<std::string, std::optional<std::string>>> entity_of(const Context& ctx) {
  std::vector<std::pair<std::string, std::optional<std::string>>> out;
  for (const std::string type : {"user", "client-id"}) {
    const auto v = ctx.args.get(type);
    const bool by_flag = ctx.args.flag(type + "-default");
    if (v && by_flag) throw UsageError("give --" + type + " or --" + type + "-default, not both");
    if (by_flag) out.emplace_back(type, std::nullopt);
    else if (v) out.emplace_back(type, *v == kDefaultName ? std::nullopt : std::optional(*v));
  }
  return out;
}

std::string name_of(const std::optional<std::string>& n) { return n ? *n : kDefaultName; }

std::string value_text(double v) { return fmt::format("{}", v); }

void describe(Context& ctx) {
  proto::DescribeClientQuotasRequest req;
  for (const auto& [type, name] : entity_of(ctx)) {
    auto& c = req.components.emplace_back();
    c.entity_type = type;
    c.match_type = name ? 0 : 1;
    c.match = name;
  }
  auto resp = ctx.client().any().call<proto::DescribeClientQuotasResponse>(req);
  check_error(resp.error_code, "describing client quotas", resp.error_message);
  Json arr = Json::array();
  Table table({"ENTITY", "QUOTA", "VALUE"});
  for (const auto& e : resp.entries.value_or(std::vector<proto::DescribeClientQuotasResponse::EntryData>{})) {
    std::string entity;
    Json je = Json::object();
    for (const auto& c : e.entity) {
      entity += (entity.empty() ? "" : ",") + c.entity_type + "=" + name_of(c.entity_name);
      je.set(c.entity_type, name_of(c.entity_name));
    }
    for (const auto& v : e.values) {
      Json j = Json::object();
      j.set("entity", je).set("quota", v.key).set("value", value_text(v.value));
      arr.push(j);
      table.add({entity, v.key, value_text(v.value)});
    }
  }
  if (ctx.json()) print_json(arr);
  else print_text(table.empty() ? "No client quotas.\n" : table.render());
}

void alter(Context& ctx) {
  const auto entity = entity_of(ctx);
  if (entity.empty()) throw UsageError("name the entity with --user NAME and/or --client-id NAME ('<default>' for the default)");
  proto::AlterClientQuotasRequest req;
  req.validate_only = ctx.args.flag("validate-only");
  auto& entry = req.entries.emplace_back();
  for (const auto& [type, name] : entity) {
    auto& e = entry.entity.emplace_back();
    e.entity_type = type;
    e.entity_name = name;
  }
  for (const auto& [key, text] : ctx.args.key_values("set", "QUOTA=NUMBER")) {
    double value = 0;
    try {
      size_t used = 0;
      value = std::stod(text, &used);
      if (used != text.size()) throw std::invalid_argument("trailing text");
    } catch (const std::exception&) {
      throw UsageError("--set takes QUOTA=NUMBER, not '" + key + "=" + text + "'");
    }
    auto& op = entry.ops.emplace_back();
    op.key = key;
    op.value = value;
  }
  for (const auto& key : ctx.args.all("delete")) {
    auto& op = entry.ops.emplace_back();
    op.key = key;
    op.remove = true;
  }
  if (entry.ops.empty()) throw UsageError("give at least one --set QUOTA=VALUE or --delete QUOTA");
  auto resp = ctx.client().any().call<proto::AlterClientQuotasResponse>(req);
  for (const auto& r : resp.entries) check_error(r.error_code, "altering client quotas", r.error_message);
  if (!ctx.json()) print_text(req.validate_only ? "The change is valid (nothing changed)." : "Client quotas changed.");
}

}  // namespace

std::vector<Command> quota_commands() {
  const std::vector<OptionSpec> entity{{"user", "NAME", "a user (the principal's name), or <default>"},
                                       {"user-default", "", "the default user (every user without a quota of its own)"},
                                       {"client-id", "NAME", "a client id, or <default>"},
                                       {"client-id-default", "", "the default client id"}};
  auto alter_opts = entity;
  alter_opts.push_back({"set", "QUOTA=VALUE",
                        "producer_byte_rate or consumer_byte_rate (bytes/s), controller_mutation_rate (partitions/s), "
                        "request_percentage (% of one reactor thread)",
                        true});
  alter_opts.push_back({"delete", "QUOTA", "remove a quota", true});
  alter_opts.push_back({"validate-only", "", "check the change without making it"});
  return {{"quotas", "describe", "List client quotas (all, or those of the named entity).", {}, 0, entity, "", describe},
          {"quotas", "alter", "Set or remove client quotas of a user, a client id, or both.", {}, 0, alter_opts,
           "A client's quota is the first set of: user+client-id, user+<default> client, user, <default> user+client-id, "
           "<default> user+<default> client, <default> user, client-id, <default> client.",
           alter}};
}

}  // namespace brokerctl
