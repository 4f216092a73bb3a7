// acls create, list, delete: Kafka's access control lists (CreateAcls, DescribeAcls,
// DeleteAcls). Resources: --topic, --group, --cluster, --transactional-id.
#include <fmt/format.h>

#include "brokerd/acl/acl.h"
#include "brokerd/protocol/messages/create_acls_request.h"
#include "brokerd/protocol/messages/create_acls_response.h"
#include "brokerd/protocol/messages/delete_acls_request.h"
#include "brokerd/protocol/messages/delete_acls_response.h"
#include "brokerd/protocol/messages/describe_acls_request.h"
#include "brokerd/protocol/messages/describe_acls_response.h"

#include "brokerctl/commands.h"

namespace brokerctl {
namespace {

namespace acl = brokerd::acl;

struct Resource {
  acl::ResourceType type = acl::ResourceType::any;
  std::optional<std::string> name;
};

// The one resource option given (--topic, --group, --cluster, --transactional-id), or ANY.
Resource resource_of(const Context& ctx, bool required) {
  std::vector<Resource> given;
  if (auto t = ctx.args.get("topic")) given.push_back({acl::ResourceType::topic, *t});
  if (auto g = ctx.args.get("group")) given.push_back({acl::ResourceType::group, *g});
  if (auto x = ctx.args.get("transactional-id")) given.push_back({acl::ResourceType::transactional_id, *x});
  if (ctx.args.flag("cluster")) given.push_back({acl::ResourceType::cluster, std::string(acl::kClusterName)});
  if (given.size() > 1) throw UsageError("give one of --topic, --group, --cluster, --transactional-id");
  if (given.empty()) {
    if (required) throw UsageError("one of --topic, --group, --cluster, --transactional-id is required");
    return {};
  }
  return given.front();
}

acl::PatternType pattern_of(const Context& ctx, acl::PatternType fallback, bool filter) {
  const auto text = ctx.args.get("pattern-type");
  if (!text) return fallback;
  auto p = acl::parse_pattern_type(*text);
  if (!p || (!filter && *p != acl::PatternType::literal && *p != acl::PatternType::prefixed))
    throw UsageError(fmt::format("--pattern-type must be {}, not '{}'", filter ? "any, match, literal or prefixed"
                                                                                 : "literal or prefixed", *text));
  return *p;
}

std::vector<acl::Operation> operations_of(const Context& ctx) {
  std::vector<acl::Operation> out;
  for (const auto& text : ctx.args.all("operation")) {
    auto op = acl::parse_operation(text);
    if (!op || *op == acl::Operation::any)
      throw UsageError(fmt::format("unknown --operation '{}' (READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, "
                                   "CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, ALL)", text));
    out.push_back(*op);
  }
  return out;
}

// check_error, saying what to do when the brokers run without an authorizer (they keep no
// ACLs then: nothing would enforce them).
void check_acl_error(int16_t code, const std::string& what, const std::optional<std::string>& message) {
  if (code == proto::code(proto::ErrorCode::security_disabled))
    throw CommandError(what + ": SECURITY_DISABLED: the brokers run without an authorizer, so they keep no ACLs; "
                       "set authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer "
                       "(docs/security.md)");
  check_error(code, what, message);
}

Json binding_json(int8_t type, const std::string& name, int8_t pattern, const std::string& principal,
                  const std::string& host, int8_t operation, int8_t permission) {
  Json j = Json::object();
  j.set("resource_type", std::string(acl::name(static_cast<acl::ResourceType>(type))))
      .set("resource_name", name)
      .set("pattern_type", std::string(acl::name(static_cast<acl::PatternType>(pattern))))
      .set("principal", principal)
      .set("host", host)
      .set("operation", std::string(acl::name(static_cast<acl::Operation>(operation))))
      .set("permission", std::string(acl::name(static_cast<acl::Permission>(permission))));
  return j;
}

void create(Context& ctx) {
  const auto principal = ctx.args.get("principal");
  if (!principal) throw UsageError("--principal User:NAME is required");
  const Resource r = resource_of(ctx, true);
  const auto ops = operations_of(ctx);
  if (ops.empty()) throw UsageError("at least one --operation is required");
  proto::CreateAclsRequest req;
  for (auto op : ops) {
    auto& c = req.creations.emplace_back();
    c.resource_type = static_cast<int8_t>(r.type);
    c.resource_name = *r.name;
    c.resource_pattern_type = static_cast<int8_t>(pattern_of(ctx, acl::PatternType::literal, false));
    c.principal = *principal;
    c.host = ctx.args.get("host").value_or("*");
    c.operation = static_cast<int8_t>(op);
    c.permission_type = static_cast<int8_t>(ctx.args.flag("deny") ? acl::Permission::deny : acl::Permission::allow);
  }
  auto resp = ctx.client().any().call<proto::CreateAclsResponse>(req);
  Json arr = Json::array();
  for (size_t i = 0; i < resp.results.size() && i < req.creations.size(); ++i) {
    const auto& c = req.creations[i];
    check_acl_error(resp.results[i].error_code, fmt::format("ACL {} on {}", acl::name(static_cast<acl::Operation>(c.operation)),
                                                        c.resource_name),
                resp.results[i].error_message);
    arr.push(binding_json(c.resource_type, c.resource_name, c.resource_pattern_type, c.principal, c.host, c.operation,
                          c.permission_type));
  }
  if (ctx.json()) print_json(arr);
  else print_text(fmt::format("Created {} ACL binding(s) for {}.", req.creations.size(), *principal));
}

// Filters shared by list and delete.
template <typename Filter>
void fill_filter(const Context& ctx, Filter& f) {
  const Resource r = resource_of(ctx, false);
  f.resource_type_filter = static_cast<int8_t>(r.type);
  f.resource_name_filter = r.name;
  f.pattern_type_filter = static_cast<int8_t>(pattern_of(ctx, acl::PatternType::any, true));
  f.principal_filter = ctx.args.get("principal");
  f.host_filter = ctx.args.get("host");
  const auto ops = operations_of(ctx);
  if (ops.size() > 1) throw UsageError("give at most one --operation to filter by");
  f.operation = static_cast<int8_t>(ops.empty() ? acl::Operation::any : ops.front());
  f.permission_type = static_cast<int8_t>(ctx.args.flag("deny") ? acl::Permission::deny : acl::Permission::any);
}

void list(Context& ctx) {
  proto::DescribeAclsRequest req;
  fill_filter(ctx, req);
  auto resp = ctx.client().any().call<proto::DescribeAclsResponse>(req);
  check_acl_error(resp.error_code, "DescribeAcls", resp.error_message);
  Json arr = Json::array();
  Table table({"PRINCIPAL", "PERMISSION", "OPERATION", "RESOURCE", "NAME", "PATTERN", "HOST"});
  for (const auto& r : resp.resources)
    for (const auto& a : r.acls) {
      arr.push(binding_json(r.resource_type, r.resource_name, r.pattern_type, a.principal, a.host, a.operation,
                            a.permission_type));
      table.add({a.principal, std::string(acl::name(static_cast<acl::Permission>(a.permission_type))),
                 std::string(acl::name(static_cast<acl::Operation>(a.operation))),
                 std::string(acl::name(static_cast<acl::ResourceType>(r.resource_type))), r.resource_name,
                 std::string(acl::name(static_cast<acl::PatternType>(r.pattern_type))), a.host});
    }
  if (ctx.json()) print_json(arr);
  else print_text(table.empty() ? "No ACLs.\n" : table.render());
}

void remove(Context& ctx) {
  proto::DeleteAclsRequest req;
  auto& f = req.filters.emplace_back();
  fill_filter(ctx, f);
  if (f.resource_type_filter == static_cast<int8_t>(acl::ResourceType::any) && !f.principal_filter)
    throw UsageError("name a resource (--topic, --group, --cluster, --transactional-id) or a --principal");
  auto resp = ctx.client().any().call<proto::DeleteAclsResponse>(req);
  Json arr = Json::array();
  size_t n = 0;
  for (const auto& r : resp.filter_results) {
    check_acl_error(r.error_code, "DeleteAcls", r.error_message);
    for (const auto& m : r.matching_acls) {
      ++n;
      arr.push(binding_json(m.resource_type, m.resource_name, m.pattern_type, m.principal, m.host, m.operation,
                            m.permission_type));
    }
  }
  if (ctx.json()) print_json(arr);
  else print_text(fmt::format("Deleted {} ACL binding(s).", n));
}

std::vector<OptionSpec> filter_options(bool create) {
  std::vector<OptionSpec> o = {
      {"principal", "User:NAME", create ? "who the binding is for (User:* for everyone)" : "only bindings of this principal"},
      {"topic", "NAME", "a topic (or a prefix with --pattern-type prefixed; * for every topic)"},
      {"group", "NAME", "a consumer group (or a prefix, or *)"},
      {"transactional-id", "ID", "a transactional id (or a prefix, or *)"},
      {"cluster", "", "the cluster"},
      {"pattern-type", create ? "literal|prefixed" : "any|match|literal|prefixed",
       create ? "how the name matches (default literal)" : "which patterns to match (default any)"},
      {"operation", "OP", create ? "READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, ... or ALL" : "only this operation",
       create},
      {"host", "HOST", create ? "the client address it applies to (default *)" : "only bindings for this host"},
      {"deny", "", create ? "a DENY binding (DENY wins over ALLOW)" : "only DENY bindings"}};
  return o;
}

}  // namespace

std::vector<Command> acl_commands() {
  return {{"acls", "create", "Grant (or, with --deny, refuse) operations on a resource to a principal.", {}, 0,
           filter_options(true),
           "Takes effect on every broker once the controller has committed it. Brokers without\n"
           "authorizer.class.name keep no ACLs and refuse this with SECURITY_DISABLED (docs/security.md).",
           create},
          {"acls", "list", "List the ACL bindings, filtered by the options given.", {}, 0, filter_options(false), "",
           list},
          {"acls", "delete", "Delete the ACL bindings the filters match.", {}, 0, filter_options(false),
           "--pattern-type match deletes every binding that applies to the named resource.", remove}};
}

}  // namespace brokerctl
