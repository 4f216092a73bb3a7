// tenants describe, alter: the limits on how many topics, and partitions in all, the topics
// of a principal or of every principal with a prefix (a team) may number, with what each
// tenant holds now.
#include <fmt/format.h>

#include "brokerd/protocol/messages/alter_tenant_limits_request.h"
#include "brokerd/protocol/messages/alter_tenant_limits_response.h"
#include "brokerd/protocol/messages/describe_tenant_limits_request.h"
#include "brokerd/protocol/messages/describe_tenant_limits_response.h"

#include "brokerctl/commands.h"

namespace brokerctl {
namespace {

constexpr int8_t kLiteral = 3, kPrefixed = 4;
constexpr const char* kMaxTopics = "max.topics";
constexpr const char* kMaxPartitions = "max.partitions";

std::string limit_text(const proto::DescribeTenantLimitsResponse::TenantLimit& l, const char* key) {
  for (const auto& v : l.values)
    if (v.key == key) return std::to_string(v.value);
  return "-";
}

void describe(Context& ctx) {
  proto::DescribeTenantLimitsRequest req;
  req.principal = ctx.args.get("principal");
  auto resp = ctx.client().any().call<proto::DescribeTenantLimitsResponse>(req);
  check_error(resp.error_code, "describing tenant limits", resp.error_message);
  Json arr = Json::array();
  Table table({"TENANT", "TOPICS", "MAX_TOPICS", "PARTITIONS", "MAX_PARTITIONS"});
  for (const auto& l : resp.limits) {
    const std::string tenant = l.principal + (l.pattern_type == kPrefixed ? "*" : "");
    Json limits = Json::object();
    for (const auto& v : l.values) limits.set(v.key, v.value);
    Json j = Json::object();
    j.set("principal", l.principal)
        .set("pattern_type", l.pattern_type == kPrefixed ? "prefixed" : "literal")
        .set("limits", limits)
        .set("topics", l.topics)
        .set("partitions", l.partitions);
    arr.push(j);
    table.add({tenant, std::to_string(l.topics), limit_text(l, kMaxTopics), std::to_string(l.partitions),
               limit_text(l, kMaxPartitions)});
  }
  if (ctx.json()) print_json(arr);
  else print_text(table.empty() ? "No tenant limits.\n" : table.render());
}

void alter(Context& ctx) {
  const auto literal = ctx.args.get("principal");
  const auto prefix = ctx.args.get("principal-prefix");
  if (literal.has_value() == prefix.has_value())
    throw UsageError("name the tenant with --principal User:NAME or --principal-prefix User:PREFIX (one of them)");
  proto::AlterTenantLimitsRequest req;
  req.validate_only = ctx.args.flag("validate-only");
  auto& entry = req.entries.emplace_back();
  entry.principal = literal ? *literal : *prefix;
  entry.pattern_type = literal ? kLiteral : kPrefixed;
  for (const auto& [key, text] : ctx.args.key_values("set", "LIMIT=INTEGER")) {
    const auto value = parse_int(text, INT64_MIN, INT64_MAX);
    if (!value) throw UsageError("--set takes LIMIT=INTEGER, not '" + key + "=" + text + "'");
    auto& op = entry.ops.emplace_back();
    op.key = key;
    op.value = *value;
  }
  for (const auto& key : ctx.args.all("delete")) {
    auto& op = entry.ops.emplace_back();
    op.key = key;
    op.remove = true;
  }
  if (entry.ops.empty()) throw UsageError("give at least one --set LIMIT=VALUE or --delete LIMIT");
  auto resp = ctx.client().any().call<proto::AlterTenantLimitsResponse>(req);
  for (const auto& r : resp.entries) check_error(r.error_code, "altering tenant limits", r.error_message);
  if (!ctx.json()) print_text(req.validate_only ? "The change is valid (nothing changed)." : "Tenant limits changed.");
}

}  // namespace

std::vector<Command> tenant_commands() {
  const std::vector<OptionSpec> alter_opts{
      {"principal", "User:NAME", "one principal"},
      {"principal-prefix", "User:PREFIX", "every principal whose name starts with PREFIX (a team)"},
      {"set", "LIMIT=VALUE", "max.topics or max.partitions (the topics' partitions, all together)", true},
      {"delete", "LIMIT", "remove a limit", true},
      {"validate-only", "", "check the change without making it"}};
  return {{"tenants", "describe", "List tenant limits with what each tenant holds (all, or those that apply to a principal).",
           {}, 0, {{"principal", "User:NAME", "only the limits that apply to this principal"}}, "", describe},
          {"tenants", "alter", "Set or remove the topic and partition limits of a principal or a prefix of principals.",
           {}, 0, alter_opts,
           "A topic counts toward every limit whose principal or prefix matches the principal that created it; a "
           "creation over any of them fails with POLICY_VIOLATION naming the limit. Lowering a limit removes nothing.",
           alter}};
}

}  // namespace brokerctl
