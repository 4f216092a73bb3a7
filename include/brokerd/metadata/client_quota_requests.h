#pragma once
// The client quota APIs (KIP-546): AlterClientQuotas as the active controller answers it
// (other brokers forward it), DescribeClientQuotas as every node answers it from its image.
#include <cstdint>

#include "brokerd/protocol/messages/alter_client_quotas_request.h"
#include "brokerd/protocol/messages/alter_client_quotas_response.h"
#include "brokerd/protocol/messages/describe_client_quotas_request.h"
#include "brokerd/protocol/messages/describe_client_quotas_response.h"

namespace brokerd::metadata {

class MetadataImage;
class MetadataStore;

inline constexpr int16_t kDescribeClientQuotas = 48, kAlterClientQuotas = 49;

// Blocks until the changes commit: call it off the reactors.
protocol::AlterClientQuotasResponse answer_alter_client_quotas(MetadataStore& store,
                                                               const protocol::AlterClientQuotasRequest& req);
protocol::DescribeClientQuotasResponse answer_describe_client_quotas(const MetadataImage& image,
                                                                     const protocol::DescribeClientQuotasRequest& req);

}  // namespace brokerd::metadata
