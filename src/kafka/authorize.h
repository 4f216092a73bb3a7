#pragma once
// The one place handlers ask whether the request's principal may do something: every
// handler calls these before it acts (the API-by-API table is in docs/security.md). Without
// an authorizer configured, everything is allowed.
#include <string>
#include <string_view>

#include "brokerd/acl/acl.h"
#include "kafka/handler.h"

namespace brokerd::kafka {

bool authorized(const HandlerContext& ctx, acl::Operation op, acl::ResourceType type, std::string_view name);

// The request's principal ("User:ANONYMOUS" when the connection authenticated no one).
const std::string& principal_of(const HandlerContext& ctx);

// For listings that leave out what the principal may not see (Metadata of every topic,
// ListGroups, ...): the same answer, neither counted as a refusal nor logged.
bool may_see(const HandlerContext& ctx, acl::ResourceType type, std::string_view name);
// Whether the principal may do `op`, asked quietly as may_see is: for answers that only
// describe what it may do.
bool permits(const HandlerContext& ctx, acl::Operation op, acl::ResourceType type, std::string_view name);

// Kafka's authorized_operations of a resource (DescribeCluster, Metadata, DescribeGroups,
// DescribeTopicPartitions): bit i set when the principal may do the operation of code i, over
// the operations the resource type supports (topic: READ, WRITE, CREATE, DELETE, ALTER,
// DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS; group: READ, DELETE, DESCRIBE; cluster: CREATE,
// ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE), with the
// authorizer's implications (READ implies DESCRIBE, ...). Without an authorizer: all of them.
int32_t authorized_operations(const HandlerContext& ctx, acl::ResourceType type, std::string_view name);

inline bool authorized_topic(const HandlerContext& ctx, acl::Operation op, std::string_view topic) {
  return authorized(ctx, op, acl::ResourceType::topic, topic);
}
inline bool authorized_group(const HandlerContext& ctx, acl::Operation op, std::string_view group) {
  return authorized(ctx, op, acl::ResourceType::group, group);
}
inline bool authorized_cluster(const HandlerContext& ctx, acl::Operation op) {
  return authorized(ctx, op, acl::ResourceType::cluster, acl::kClusterName);
}

// Whether the principal may do `op` on some resource of the type (an ALLOW binding for it
// that no DENY of the same pattern cancels): KIP-679's test for idempotent producers.
bool authorized_any(const HandlerContext& ctx, acl::Operation op, acl::ResourceType type);

// DESCRIBE_CONFIGS or ALTER_CONFIGS on a config resource (ConfigResource.Type: 2 a topic,
// 4 a broker, which Kafka authorizes on the cluster): the error to answer, or NONE.
protocol::ErrorCode config_access(const HandlerContext& ctx, int8_t resource_type, std::string_view name,
                                  acl::Operation op);

}  // namespace brokerd::kafka
