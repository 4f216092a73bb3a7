// Feature levels: UpdateFeatures' checks, the first levels a registration finalizes (once, and
// never again after a feature was disabled), the replay of FeatureLevelRecord and a snapshot
// keeping the levels.
#include <gtest/gtest.h>

#include "brokerd/metadata/features.h"
#include "metadata/metadata_records.h"

namespace brokerd::metadata {
namespace {

using protocol::ErrorCode;

void replay(const std::vector<Bytes>& records, MetadataImage& image) {
  const std::string change = encode_change(records);
  apply_change(std::as_bytes(std::span<const char>(change.data(), change.size())), image);
}

TEST(Features, ANewClusterFinalizesTransactionVersion2Once) {
  MetadataImage image;
  EXPECT_EQ(finalized_level(image, kTransactionVersion), 0);
  auto first = initial_feature_records(image);
  ASSERT_EQ(first.size(), 1u);
  replay(first, image);
  EXPECT_EQ(finalized_level(image, kTransactionVersion), 2);
  EXPECT_TRUE(initial_feature_records(image).empty());
  // Disabled (level 0) stays disabled: the next registration does not set it again.
  replay({feature_level_record(std::string(kTransactionVersion), 0)}, image);
  EXPECT_EQ(finalized_level(image, kTransactionVersion), 0);
  EXPECT_TRUE(initial_feature_records(image).empty());
}

TEST(Features, UpdatesAreCheckedAgainstTheSupportedRangeAndTheirDirection) {
  MetadataImage image;
  replay({feature_level_record(std::string(kTransactionVersion), 1)}, image);
  auto check = [&](std::string name, int16_t level, UpgradeType type) {
    return check_feature_update(image, {std::move(name), level, type}).error;
  };
  EXPECT_EQ(check("transaction.version", 2, UpgradeType::upgrade), ErrorCode::none);
  EXPECT_EQ(check("transaction.version", 1, UpgradeType::upgrade), ErrorCode::none);  // unchanged
  EXPECT_EQ(check("transaction.version", 3, UpgradeType::upgrade), ErrorCode::invalid_update_version);
  EXPECT_EQ(check("transaction.version", -1, UpgradeType::upgrade), ErrorCode::invalid_update_version);
  EXPECT_EQ(check("no.such.feature", 1, UpgradeType::upgrade), ErrorCode::invalid_update_version);
  // A lower level needs a downgrade type; a downgrade cannot raise the level.
  EXPECT_EQ(check("transaction.version", 0, UpgradeType::upgrade), ErrorCode::invalid_update_version);
  EXPECT_EQ(check("transaction.version", 0, UpgradeType::safe_downgrade), ErrorCode::none);
  EXPECT_EQ(check("transaction.version", 0, UpgradeType::unsafe_downgrade), ErrorCode::none);
  EXPECT_EQ(check("transaction.version", 2, UpgradeType::safe_downgrade), ErrorCode::invalid_update_version);
}

TEST(Features, ASnapshotKeepsTheLevels) {
  MetadataImage image;
  replay({feature_level_record(std::string(kTransactionVersion), 1)}, image);
  MetadataImage restored;
  replay(image_records(image), restored);
  EXPECT_EQ(finalized_level(restored, kTransactionVersion), 1);
  EXPECT_TRUE(initial_feature_records(restored).empty());
}

}  // namespace
}  // namespace brokerd::metadata
