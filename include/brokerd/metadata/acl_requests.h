#pragma once
// The ACL APIs: CreateAcls and DeleteAcls as the active controller answers them (other
// brokers forward them), DescribeAcls as every node answers it from its metadata image.
#include <cstdint>

#include "brokerd/protocol/messages/create_acls_request.h"
#include "brokerd/protocol/messages/create_acls_response.h"
#include "brokerd/protocol/messages/delete_acls_request.h"
#include "brokerd/protocol/messages/delete_acls_response.h"
#include "brokerd/protocol/messages/describe_acls_request.h"
#include "brokerd/protocol/messages/describe_acls_response.h"

namespace brokerd::metadata {

class MetadataImage;
class MetadataStore;

inline constexpr int16_t kDescribeAcls = 29, kCreateAcls = 30, kDeleteAcls = 31;
inline constexpr int16_t kAclsMinVersion = 1, kAclsMaxVersion = 3;

// Block until the changes commit: call them off the reactors.
protocol::CreateAclsResponse answer_create_acls(MetadataStore& store, const protocol::CreateAclsRequest& req);
protocol::DeleteAclsResponse answer_delete_acls(MetadataStore& store, const protocol::DeleteAclsRequest& req);
protocol::DescribeAclsResponse answer_describe_acls(const MetadataImage& image, const protocol::DescribeAclsRequest& req);

}  // namespace brokerd::metadata
