#pragma once
// The tenant-limit APIs (brokerd's own, proto/brokerd): AlterTenantLimits as the active
// controller answers it (other brokers forward it), DescribeTenantLimits as every node
// answers it from its image, with what each tenant holds now.
#include <cstdint>

#include "brokerd/protocol/messages/alter_tenant_limits_request.h"
#include "brokerd/protocol/messages/alter_tenant_limits_response.h"
#include "brokerd/protocol/messages/describe_tenant_limits_request.h"
#include "brokerd/protocol/messages/describe_tenant_limits_response.h"

namespace brokerd::metadata {

class MetadataImage;
class MetadataStore;

inline constexpr int16_t kAlterTenantLimits = 30004, kDescribeTenantLimits = 30005;

// Blocks until the changes commit: call it off the reactors.
protocol::AlterTenantLimitsResponse answer_alter_tenant_limits(MetadataStore& store,
                                                               const protocol::AlterTenantLimitsRequest& req);
// Every limit, or (with a principal) those that apply to that principal.
protocol::DescribeTenantLimitsResponse answer_describe_tenant_limits(const MetadataImage& image,
                                                                     const protocol::DescribeTenantLimitsRequest& req);

}  // namespace brokerd::metadata
