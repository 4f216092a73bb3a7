#include "kafka/authorize.h"

#include <span>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/common/logger.h"
#include "brokerd/security/authorization.h"
#include "brokerd/metrics/broker_metrics.h"

namespace brokerd::kafka {

const std::string& principal_of(const HandlerContext& ctx) {
  static const std::string anonymous = "User:ANONYMOUS";
  return ctx.request.connection ? ctx.request.connection->principal : anonymous;
}

namespace {

// Asks `check(index, rules, principal, host)` about the request's principal, counting and
// logging a refusal.
template <typename Check>
bool judge(const HandlerContext& ctx, Check check, acl::Operation op, acl::ResourceType type, std::string_view name,
           bool quiet = false) {
  const auto* conn = ctx.request.connection;
  const std::string& principal = principal_of(ctx);
  const std::string_view host = conn ? security::Authorization::client_host(conn->peer) : std::string_view("*");
  if (!ctx.acl_image) ctx.acl_image = ctx.services.metadata.image();
  const bool allowed = check(*ctx.acl_image->acls->index, ctx.services.authorization.rules, principal, host);
  if (!allowed && !quiet) {
    static const auto log = module_logger("kafka");
    ctx.services.metrics.authorization_refused(principal);
    log->debug("{} from {} may not {} {} '{}'", principal, host, acl::name(op), acl::name(type), name);
  }
  return allowed;
}

}  // namespace

bool authorized(const HandlerContext& ctx, acl::Operation op, acl::ResourceType type, std::string_view name) {
  if (!ctx.services.authorization.enabled) return true;
  return judge(
      ctx,
      [&](const acl::Index& index, const acl::AuthorizerConfig& rules, std::string_view principal, std::string_view host) {
        return index.authorize(rules, principal, host, op, type, name);
      },
      op, type, name);
}

bool may_see(const HandlerContext& ctx, acl::ResourceType type, std::string_view name) {
  if (!ctx.services.authorization.enabled) return true;
  return judge(
      ctx,
      [&](const acl::Index& index, const acl::AuthorizerConfig& rules, std::string_view principal, std::string_view host) {
        return index.authorize(rules, principal, host, acl::Operation::describe, type, name);
      },
      acl::Operation::describe, type, name, true);
}

bool permits(const HandlerContext& ctx, acl::Operation op, acl::ResourceType type, std::string_view name) {
  if (!ctx.services.authorization.enabled) return true;
  return judge(
      ctx,
      [&](const acl::Index& index, const acl::AuthorizerConfig& rules, std::string_view principal, std::string_view host) {
        return index.authorize(rules, principal, host, op, type, name);
      },
      op, type, name, true);
}

int32_t authorized_operations(const HandlerContext& ctx, acl::ResourceType type, std::string_view name) {
  using Op = acl::Operation;
  static constexpr Op kTopic[] = {Op::read,  Op::write,    Op::create,           Op::remove,
                                  Op::alter, Op::describe, Op::describe_configs, Op::alter_configs};
  static constexpr Op kGroup[] = {Op::read, Op::remove, Op::describe};
  static constexpr Op kCluster[] = {Op::create,           Op::alter,         Op::describe,        Op::cluster_action,
                                    Op::describe_configs, Op::alter_configs, Op::idempotent_write};
  std::span<const Op> supported;
  switch (type) {
    case acl::ResourceType::topic: supported = kTopic; break;
    case acl::ResourceType::group: supported = kGroup; break;
    case acl::ResourceType::cluster: supported = kCluster; break;
    default: return 0;
  }
  int32_t bits = 0;
  for (Op op : supported)
    if (permits(ctx, op, type, name)) bits |= int32_t{1} << static_cast<int>(op);
  return bits;
}

bool authorized_any(const HandlerContext& ctx, acl::Operation op, acl::ResourceType type) {
  if (!ctx.services.authorization.enabled) return true;
  return judge(
      ctx,
      [&](const acl::Index& index, const acl::AuthorizerConfig& rules, std::string_view principal, std::string_view host) {
        return index.authorize_any(rules, principal, host, op, type);
      },
      op, type, "(any)");
}

protocol::ErrorCode config_access(const HandlerContext& ctx, int8_t resource_type, std::string_view name,
                                  acl::Operation op) {
  constexpr int8_t kTopic = 2;
  if (resource_type == kTopic)
    return authorized_topic(ctx, op, name) ? protocol::ErrorCode::none : protocol::ErrorCode::topic_authorization_failed;
  return authorized_cluster(ctx, op) ? protocol::ErrorCode::none : protocol::ErrorCode::cluster_authorization_failed;
}

}  // namespace brokerd::kafka
