#pragma once
// The SCRAM credential APIs (KIP-554): AlterUserScramCredentials as the active controller
// answers it (other brokers forward it), DescribeUserScramCredentials as every node answers
// it from its metadata image. Neither ever returns a key or a salt.
#include <cstdint>

#include "brokerd/protocol/messages/alter_user_scram_credentials_request.h"
#include "brokerd/protocol/messages/alter_user_scram_credentials_response.h"
#include "brokerd/protocol/messages/describe_user_scram_credentials_request.h"
#include "brokerd/protocol/messages/describe_user_scram_credentials_response.h"

namespace brokerd::metadata {

class MetadataImage;
class MetadataStore;

inline constexpr int16_t kDescribeUserScramCredentials = 50, kAlterUserScramCredentials = 51;

// Blocks until the changes commit: call it off the reactors.
protocol::AlterUserScramCredentialsResponse answer_alter_user_scram_credentials(
    MetadataStore& store, const protocol::AlterUserScramCredentialsRequest& req);
protocol::DescribeUserScramCredentialsResponse answer_describe_user_scram_credentials(
    const MetadataImage& image, const protocol::DescribeUserScramCredentialsRequest& req);

}  // namespace brokerd::metadata
