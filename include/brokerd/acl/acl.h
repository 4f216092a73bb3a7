#pragma once
// Kafka's access control lists, as values: the resource, pattern, operation and permission
// codes of the wire protocol (CreateAcls, DescribeAcls, DeleteAcls, AccessControlEntryRecord),
// one binding, and the filters DescribeAcls and DeleteAcls match bindings with.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "brokerd/protocol/uuid.h"

namespace brokerd::acl {

// Kafka's codes. UNKNOWN (0) is never valid in a binding.
enum class ResourceType : int8_t { any = 1, topic = 2, group = 3, cluster = 4, transactional_id = 5, delegation_token = 6, user = 7 };
enum class PatternType : int8_t { any = 1, match = 2, literal = 3, prefixed = 4 };
enum class Operation : int8_t {
  any = 1, all = 2, read = 3, write = 4, create = 5, remove = 6 /* DELETE */, alter = 7, describe = 8,
  cluster_action = 9, describe_configs = 10, alter_configs = 11, idempotent_write = 12, create_tokens = 13,
  describe_tokens = 14
};
enum class Permission : int8_t { any = 1, deny = 2, allow = 3 };

// The only name a CLUSTER resource has, and the literal name that matches every resource.
inline constexpr std::string_view kClusterName = "kafka-cluster";
inline constexpr std::string_view kWildcard = "*";

struct Binding {
  protocol::Uuid id;  // the AccessControlEntryRecord's id
  ResourceType resource_type = ResourceType::topic;
  std::string resource_name;
  PatternType pattern_type = PatternType::literal;
  std::string principal;  // "User:alice", or "User:*" for everyone
  std::string host;       // an address, or "*" for every host
  Operation operation = Operation::read;
  Permission permission = Permission::allow;
  bool operator==(const Binding& o) const {
    return resource_type == o.resource_type && resource_name == o.resource_name && pattern_type == o.pattern_type &&
           principal == o.principal && host == o.host && operation == o.operation && permission == o.permission;
  }
};

// Why a binding may not be created, as Kafka words it, or nullopt. Checks codes (no ANY or
// MATCH, no UNKNOWN), a principal of the form Type:name, a non-empty name, the cluster
// resource's name, and that PREFIXED is not used with "*" or the cluster.
std::optional<std::string> invalid_binding(const Binding& b);

// A binding from the integer codes the wire and the metadata records carry (unchecked: see
// invalid_binding).
Binding binding_of(const protocol::Uuid& id, int8_t resource_type, std::string resource_name, int8_t pattern_type,
                   std::string principal, std::string host, int8_t operation, int8_t permission);

// A DescribeAcls/DeleteAcls filter: unset strings and ANY codes match everything; the MATCH
// pattern type matches every binding that applies to `resource_name` (literal equal, the
// literal wildcard, or a prefix of it).
struct Filter {
  ResourceType resource_type = ResourceType::any;
  std::optional<std::string> resource_name;
  PatternType pattern_type = PatternType::any;
  std::optional<std::string> principal;
  std::optional<std::string> host;
  Operation operation = Operation::any;
  Permission permission = Permission::any;
};
bool matches(const Filter& f, const Binding& b);
// Why a filter is unusable (UNKNOWN codes), or nullopt.
std::optional<std::string> invalid_filter(const Filter& f);

std::string_view name(ResourceType t);  // "TOPIC"
std::string_view name(PatternType t);   // "LITERAL"
std::string_view name(Operation o);     // "READ"
std::string_view name(Permission p);    // "ALLOW"
// Case-insensitive, Kafka's names (Operation: "DELETE" for remove, "IDEMPOTENT_WRITE", ...).
std::optional<ResourceType> parse_resource_type(std::string_view s);
std::optional<PatternType> parse_pattern_type(std::string_view s);
std::optional<Operation> parse_operation(std::string_view s);
std::optional<Permission> parse_permission(std::string_view s);

}  // namespace brokerd::acl
