#include "brokerd/acl/acl.h"

#include <array>
#include <cctype>

namespace brokerd::acl {
namespace {

// Kafka's names, indexed by code; index 0 is UNKNOWN. The enums may hold any int8 (callers
// cast wire codes), so every lookup is range-checked.
constexpr std::array<std::string_view, 8> kResourceTypeNames = {
    "UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER"};
constexpr std::array<std::string_view, 5> kPatternTypeNames = {"UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"};
constexpr std::array<std::string_view, 15> kOperationNames = {
    "UNKNOWN", "ANY",           "ALL",           "READ",             "WRITE",         "CREATE",
    "DELETE",  "ALTER",         "DESCRIBE",      "CLUSTER_ACTION",   "DESCRIBE_CONFIGS",
    "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS"};
constexpr std::array<std::string_view, 4> kPermissionNames = {"UNKNOWN", "ANY", "DENY", "ALLOW"};

// The code as an index into a table of N names, or 0 (UNKNOWN) when out of range.
template <size_t N, typename E>
size_t code_index(E e) {
  int c = static_cast<int>(e);
  return c > 0 && static_cast<size_t>(c) < N ? static_cast<size_t>(c) : 0;
}

template <typename E>
bool in_range(E e, int last) {
  int c = static_cast<int>(e);
  return c >= 1 && c <= last;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(a[i])) != std::toupper(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

// The code whose name equals `s` ignoring case; UNKNOWN (index 0) never parses.
template <typename E, size_t N>
std::optional<E> parse_name(std::string_view s, const std::array<std::string_view, N>& names) {
  for (size_t i = 1; i < N; ++i)
    if (iequals(s, names[i])) return static_cast<E>(i);
  return std::nullopt;
}

bool valid_principal(std::string_view p) {
  size_t colon = p.find(':');
  return colon != std::string_view::npos && colon > 0 && colon + 1 < p.size();
}

}  // namespace

std::string_view name(ResourceType t) { return kResourceTypeNames[code_index<kResourceTypeNames.size()>(t)]; }
std::string_view name(PatternType t) { return kPatternTypeNames[code_index<kPatternTypeNames.size()>(t)]; }
std::string_view name(Operation o) { return kOperationNames[code_index<kOperationNames.size()>(o)]; }
std::string_view name(Permission p) { return kPermissionNames[code_index<kPermissionNames.size()>(p)]; }

std::optional<ResourceType> parse_resource_type(std::string_view s) {
  return parse_name<ResourceType>(s, kResourceTypeNames);
}
std::optional<PatternType> parse_pattern_type(std::string_view s) {
  return parse_name<PatternType>(s, kPatternTypeNames);
}
std::optional<Operation> parse_operation(std::string_view s) { return parse_name<Operation>(s, kOperationNames); }
std::optional<Permission> parse_permission(std::string_view s) { return parse_name<Permission>(s, kPermissionNames); }

std::optional<std::string> invalid_binding(const Binding& b) {
  // Kafka's controller checks codes in this order and words them this way (AclControlManager).
  if (!in_range(b.resource_type, 7) || b.resource_type == ResourceType::any)
    return "Invalid resourceType " + std::string(name(b.resource_type));
  if (b.pattern_type != PatternType::literal && b.pattern_type != PatternType::prefixed)
    return "Invalid patternType " + std::string(name(b.pattern_type));
  if (!in_range(b.operation, 14) || b.operation == Operation::any)
    return "Invalid operation " + std::string(name(b.operation));
  if (b.permission != Permission::deny && b.permission != Permission::allow)
    return "Invalid permissionType " + std::string(name(b.permission));
  if (b.resource_name.empty()) return "Resource name should not be empty";
  if (!valid_principal(b.principal))
    return "Could not parse principal from `" + b.principal +
           "` (expected <type>:<name>, with a colon separating a non-empty principal type from a non-empty name)";
  if (b.host.empty()) return "Host should not be empty (use * for every host)";
  if (b.resource_type == ResourceType::cluster) {
    if (b.pattern_type == PatternType::prefixed) return "The CLUSTER resource may not be used with patternType PREFIXED";
    if (b.resource_name != kClusterName)
      return "The only valid name for the CLUSTER resource is " + std::string(kClusterName);
  }
  if (b.pattern_type == PatternType::prefixed && b.resource_name == kWildcard)
    return "A PREFIXED resource pattern may not use the name * (use a LITERAL * to match every resource)";
  return std::nullopt;
}

std::optional<std::string> invalid_filter(const Filter& f) {
  // ANY and MATCH are fine in a filter; only codes outside Kafka's enums (UNKNOWN) are not.
  if (!in_range(f.resource_type, 7)) return "Unknown resourceType in the ACL filter";
  if (!in_range(f.pattern_type, 4)) return "Unknown patternType in the ACL filter";
  if (!in_range(f.operation, 14)) return "Unknown operation in the ACL filter";
  if (!in_range(f.permission, 3)) return "Unknown permissionType in the ACL filter";
  return std::nullopt;
}

bool matches(const Filter& f, const Binding& b) {
  if (f.resource_type != ResourceType::any && f.resource_type != b.resource_type) return false;
  if (f.pattern_type != PatternType::any && f.pattern_type != PatternType::match && f.pattern_type != b.pattern_type)
    return false;
  if (f.resource_name) {
    const std::string& n = *f.resource_name;
    if (f.pattern_type == PatternType::match) {
      // Every binding that would apply to a resource called `n`.
      if (b.pattern_type == PatternType::literal) {
        if (b.resource_name != n && b.resource_name != kWildcard) return false;
      } else if (b.pattern_type == PatternType::prefixed) {
        if (!std::string_view(n).starts_with(b.resource_name)) return false;
      } else {
        return false;
      }
    } else if (b.resource_name != n) {
      return false;
    }
  }
  if (f.principal && *f.principal != b.principal) return false;
  if (f.host && *f.host != b.host) return false;
  if (f.operation != Operation::any && f.operation != b.operation) return false;
  if (f.permission != Permission::any && f.permission != b.permission) return false;
  return true;
}

Binding binding_of(const protocol::Uuid& id, int8_t resource_type, std::string resource_name, int8_t pattern_type,
                   std::string principal, std::string host, int8_t operation, int8_t permission) {
  return Binding{id,
                 static_cast<ResourceType>(resource_type),
                 std::move(resource_name),
                 static_cast<PatternType>(pattern_type),
                 std::move(principal),
                 std::move(host),
                 static_cast<Operation>(operation),
                 static_cast<Permission>(permission)};
}

}  // namespace brokerd::acl
