// The controller's changes of client quotas (KIP-546): one ClientQuotaRecord per key set or
// removed; the changes of one request commit together.
// Also the replay of their records into the image (record_replay.h).
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/common/logger.h"
#include "metadata/metadata_records.h"
#include "metadata/record_replay.h"

namespace brokerd::metadata {

MetadataStore::ChangeAnswer MetadataStore::alter_client_quotas(const std::vector<QuotaChange>& changes) {
  std::vector<Bytes> records;
  for (const auto& c : changes)
    for (const auto& [key, value, remove] : c.ops) records.push_back(client_quota_record(c.entity, key, value, remove));
  const ChangeAnswer answer = commit_settings(records);
  if (answer.error != protocol::ErrorCode::none || records.empty()) return answer;
  for (const auto& c : changes)
    for (const auto& [key, value, remove] : c.ops) {
      if (remove) module_logger("metadata")->info("client quota {} of {} removed", key, quota::to_string(c.entity));
      else module_logger("metadata")->info("client quota {} of {} set to {}", key, quota::to_string(c.entity), value);
    }
  return answer;
}

void replay(const protocol::ClientQuotaRecord& r, MetadataImage& image) {
  const quota::Entity entity = quota::normalized(quota::entity_of(r.entity));
  set_or_remove(writable(image.client_quotas, image.owns_client_quotas), entity, r.key, r.value, r.remove);
}

}  // namespace brokerd::metadata
