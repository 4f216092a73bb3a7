#include "brokerd/metadata/client_quota_requests.h"

#include <set>

#include "brokerd/metadata/metadata_store.h"

namespace brokerd::metadata {

using protocol::ErrorCode;

protocol::AlterClientQuotasResponse answer_alter_client_quotas(MetadataStore& store,
                                                               const protocol::AlterClientQuotasRequest& req) {
  // One answer per entry; the valid entries commit together (none when validate_only).
  protocol::AlterClientQuotasResponse resp;
  std::vector<MetadataStore::QuotaChange> changes;
  std::vector<size_t> changed;  // the answer of each change
  std::set<quota::Entity> seen;
  for (const auto& entry : req.entries) {
    auto& answer = resp.entries.emplace_back();
    answer.error_message = std::nullopt;  // null on success, as the schema says
    quota::Entity entity = quota::entity_of(entry.entity);
    quota::put_entity(entity, answer.entity);  // echoed as given
    entity = quota::normalized(std::move(entity));
    std::string why = quota::check_entity(entity);
    if (why.empty() && !seen.insert(entity).second) why = "The entity " + quota::to_string(entity) + " is named twice.";
    MetadataStore::QuotaChange change{entity, {}};
    std::set<std::string> keys;
    for (const auto& op : entry.ops) {
      if (!why.empty()) break;
      why = quota::check_op(op.key, op.value, op.remove);
      if (why.empty() && !keys.insert(op.key).second) why = "Quota " + op.key + " is set twice.";
      change.ops.emplace_back(op.key, op.value, op.remove);
    }
    if (!why.empty()) {
      answer.error_code = protocol::code(ErrorCode::invalid_request);
      answer.error_message = why;
      continue;
    }
    changed.push_back(resp.entries.size() - 1);
    changes.push_back(std::move(change));
  }
  if (req.validate_only || changes.empty()) return resp;
  const auto result = store.alter_client_quotas(changes);
  for (size_t i : changed) {
    resp.entries[i].error_code = protocol::code(result.error);
    if (result.error != ErrorCode::none) resp.entries[i].error_message = result.message;
  }
  return resp;
}

protocol::DescribeClientQuotasResponse answer_describe_client_quotas(const MetadataImage& image,
                                                                     const protocol::DescribeClientQuotasRequest& req) {
  protocol::DescribeClientQuotasResponse resp;
  resp.error_message = std::nullopt;  // null on success, as the schema says
  std::vector<quota::FilterComponent> filter;
  for (const auto& c : req.components) filter.push_back({c.entity_type, c.match_type, c.match});
  if (auto why = quota::check_filter(filter); !why.empty()) {
    resp.error_code = protocol::code(ErrorCode::invalid_request);
    resp.error_message = why;
    resp.entries = std::nullopt;
    return resp;
  }
  resp.entries.emplace();
  for (const auto& [entity, values] : *image.client_quotas) {
    if (!quota::matches(entity, filter, req.strict)) continue;
    auto& entry = resp.entries->emplace_back();
    quota::put_entity(entity, entry.entity);
    for (const auto& [key, value] : values) {
      auto& v = entry.values.emplace_back();
      v.key = key;
      v.value = value;
    }
  }
  return resp;
}

}  // namespace brokerd::metadata
