#pragma once
// Kafka's feature flags (KIP-584, KIP-778): the levels this broker supports and the levels
// the cluster has finalized (FeatureLevelRecord in the metadata log), UpdateFeatures' rules,
// and the levels a cluster that has never set a feature starts at.
//
// brokerd knows one feature, `transaction.version` (KIP-890): 0 and 1 keep Kafka's original
// transaction protocol (1 writes __transaction_state values with the client's version in them);
// 2 is KIP-890 part 2: a new producer epoch at every commit or abort (EndTxn v5), partitions
// and the group's offsets added to a transaction by Produce v12 and TxnOffsetCommit v5
// themselves. Clients read the finalized level from ApiVersions and use part 2 only at 2.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "brokerd/common/bytes.h"
#include "brokerd/protocol/error_code.h"

namespace brokerd::metadata {

class MetadataImage;

inline constexpr std::string_view kTransactionVersion = "transaction.version";

struct SupportedFeature {
  std::string_view name;
  int16_t min_level = 0;
  int16_t max_level = 0;
  // The level a cluster that has never finalized the feature gets when its first broker
  // registers (as `kafka-storage format` gives a new Kafka 4 cluster).
  int16_t initial_level = 0;
};

std::span<const SupportedFeature> supported_features();
const SupportedFeature* supported_feature(std::string_view name);

// The level `name` is finalized at (0: never set, or disabled).
int16_t finalized_level(const MetadataImage& image, std::string_view name);

// UpdateFeatures' upgrade types (v1+; v0's AllowDowngrade maps to safe_downgrade).
enum class UpgradeType : int8_t { upgrade = 1, safe_downgrade = 2, unsafe_downgrade = 3 };

struct FeatureUpdate {
  std::string feature;
  int16_t level = 0;
  UpgradeType type = UpgradeType::upgrade;
};

struct FeatureRefusal {
  protocol::ErrorCode error = protocol::ErrorCode::none;
  std::string message;
};

// Whether `update` may apply to `image`: a feature this broker knows, a level it supports
// (0 disables), an upgrade not marked as a downgrade, a downgrade marked as one.
FeatureRefusal check_feature_update(const MetadataImage& image, const FeatureUpdate& update);

// The FeatureLevelRecords a registration adds: one per supported feature the cluster has
// never finalized (nor disabled), at its initial level.
std::vector<Bytes> initial_feature_records(const MetadataImage& image);

}  // namespace brokerd::metadata
