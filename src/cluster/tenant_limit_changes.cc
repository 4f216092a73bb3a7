// The controller's changes of tenant limits: one TenantLimitRecord per key set or removed;
// the changes of one request commit together.
#include "brokerd/cluster/metadata_store.h"
#include "brokerd/common/logger.h"
#include "cluster/metadata_records.h"

namespace brokerd::cluster {

using protocol::ErrorCode;

MetadataStore::ChangeAnswer MetadataStore::alter_tenant_limits(const std::vector<TenantLimitChange>& changes) {
  if (!leads()) return {ErrorCode::not_controller, "This node is not the active controller."};
  std::lock_guard lock(write_mutex_);
  std::vector<Bytes> records;
  for (const auto& c : changes)
    for (const auto& [key, value, remove] : c.ops) records.push_back(tenant_limit_record(c.pattern, key, value, remove));
  if (records.empty()) return {};
  std::string why;
  const ErrorCode e = commit(records, &why);
  if (e != ErrorCode::none) return {e, why};
  for (const auto& c : changes)
    for (const auto& [key, value, remove] : c.ops) {
      if (remove) module_logger("cluster")->info("tenant limit {} of {} removed", key, tenant::to_string(c.pattern));
      else module_logger("cluster")->info("tenant limit {} of {} set to {}", key, tenant::to_string(c.pattern), value);
    }
  return {};
}

}  // namespace brokerd::cluster
