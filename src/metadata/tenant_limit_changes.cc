// The controller's changes of tenant limits: one TenantLimitRecord per key set or removed;
// the changes of one request commit together.
// Also the replay of their records into the image (record_replay.h).
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/common/logger.h"
#include "metadata/metadata_records.h"
#include "metadata/record_replay.h"

namespace brokerd::metadata {

MetadataStore::ChangeAnswer MetadataStore::alter_tenant_limits(const std::vector<TenantLimitChange>& changes) {
  std::vector<Bytes> records;
  for (const auto& c : changes)
    for (const auto& [key, value, remove] : c.ops) records.push_back(tenant_limit_record(c.pattern, key, value, remove));
  const ChangeAnswer answer = commit_settings(records);
  if (answer.error != protocol::ErrorCode::none || records.empty()) return answer;
  for (const auto& c : changes)
    for (const auto& [key, value, remove] : c.ops) {
      if (remove) module_logger("metadata")->info("tenant limit {} of {} removed", key, tenant::to_string(c.pattern));
      else module_logger("metadata")->info("tenant limit {} of {} set to {}", key, tenant::to_string(c.pattern), value);
    }
  return answer;
}

void replay(const protocol::TenantLimitRecord& r, MetadataImage& image) {
  const tenant::Pattern pattern{r.principal, r.pattern_type};
  set_or_remove(writable(image.tenant_limits, image.owns_tenant_limits), pattern, r.key, r.value, r.remove);
}

}  // namespace brokerd::metadata
