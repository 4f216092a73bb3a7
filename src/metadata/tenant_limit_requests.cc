#include "brokerd/metadata/tenant_limit_requests.h"

#include <set>

#include "brokerd/metadata/metadata_store.h"

namespace brokerd::metadata {

using protocol::ErrorCode;

protocol::AlterTenantLimitsResponse answer_alter_tenant_limits(MetadataStore& store,
                                                               const protocol::AlterTenantLimitsRequest& req) {
  // One answer per entry; the valid entries commit together (none when validate_only).
  protocol::AlterTenantLimitsResponse resp;
  std::vector<MetadataStore::TenantLimitChange> changes;
  std::vector<size_t> changed;  // the answer of each change
  std::set<tenant::Pattern> seen;
  for (const auto& entry : req.entries) {
    auto& answer = resp.entries.emplace_back();
    answer.principal = entry.principal;
    answer.pattern_type = entry.pattern_type;
    const tenant::Pattern pattern{entry.principal, entry.pattern_type};
    std::string why = tenant::check_pattern(pattern);
    if (why.empty() && !seen.insert(pattern).second) why = "The tenant " + tenant::to_string(pattern) + " is named twice.";
    MetadataStore::TenantLimitChange change{pattern, {}};
    std::set<std::string> keys;
    for (const auto& op : entry.ops) {
      if (!why.empty()) break;
      why = tenant::check_op(op.key, op.value, op.remove);
      if (why.empty() && !keys.insert(op.key).second) why = "Limit " + op.key + " is set twice.";
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
  const auto result = store.alter_tenant_limits(changes);
  for (size_t i : changed) {
    resp.entries[i].error_code = protocol::code(result.error);
    if (result.error != ErrorCode::none) resp.entries[i].error_message = result.message;
  }
  return resp;
}

protocol::DescribeTenantLimitsResponse answer_describe_tenant_limits(const MetadataImage& image,
                                                                     const protocol::DescribeTenantLimitsRequest& req) {
  protocol::DescribeTenantLimitsResponse resp;
  for (const auto& [pattern, values] : *image.tenant_limits) {
    if (req.principal && !tenant::matches(pattern, *req.principal)) continue;
    auto& limit = resp.limits.emplace_back();
    limit.principal = pattern.principal;
    limit.pattern_type = pattern.type;
    for (const auto& [key, value] : values) {
      auto& v = limit.values.emplace_back();
      v.key = key;
      v.value = value;
    }
    const tenant::Usage usage = image.tenant_usage(pattern);
    limit.topics = static_cast<int32_t>(usage.topics);
    limit.partitions = static_cast<int32_t>(usage.partitions);
  }
  return resp;
}

}  // namespace brokerd::metadata
