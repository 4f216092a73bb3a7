// Feature levels: the supported ranges, the finalized levels, UpdateFeatures' checks and the
// first levels of a new cluster; the replay of FeatureLevelRecord.
#include "brokerd/metadata/features.h"

#include <algorithm>
#include <fmt/format.h>

#include "brokerd/metadata/metadata_image.h"
#include "metadata/metadata_records.h"
#include "metadata/record_replay.h"

namespace brokerd::metadata {
namespace {

using protocol::ErrorCode;

constexpr SupportedFeature kSupported[] = {
    {kTransactionVersion, 0, 2, 2},
};

FeatureRefusal refuse(std::string message) { return {ErrorCode::invalid_update_version, std::move(message)}; }

}  // namespace

std::span<const SupportedFeature> supported_features() { return kSupported; }

const SupportedFeature* supported_feature(std::string_view name) {
  auto it = std::find_if(std::begin(kSupported), std::end(kSupported),
                         [&](const SupportedFeature& f) { return f.name == name; });
  return it == std::end(kSupported) ? nullptr : &*it;
}

int16_t finalized_level(const MetadataImage& image, std::string_view name) {
  auto it = image.features.find(std::string(name));
  return it == image.features.end() ? 0 : it->second;
}

FeatureRefusal check_feature_update(const MetadataImage& image, const FeatureUpdate& u) {
  const SupportedFeature* f = supported_feature(u.feature);
  if (!f) return refuse(fmt::format("The controller does not support the feature {}.", u.feature));
  if (u.level < 0) return refuse(fmt::format("Invalid level {} for the feature {}: levels are not negative.", u.level, u.feature));
  if (u.level != 0 && (u.level < f->min_level || u.level > f->max_level))
    return refuse(fmt::format("Invalid level {} for the feature {}: this cluster supports {} to {}.", u.level, u.feature,
                              f->min_level, f->max_level));
  const int16_t current = finalized_level(image, u.feature);
  if (u.level > current && u.type != UpgradeType::upgrade)
    return refuse(fmt::format("Invalid update of {} from {} to {}: a downgrade cannot raise the level.", u.feature,
                              current, u.level));
  if (u.level < current && u.type == UpgradeType::upgrade)
    return refuse(fmt::format("Invalid update of {} from {} to {}: lowering a level needs the upgrade type "
                              "SAFE_DOWNGRADE or UNSAFE_DOWNGRADE.", u.feature, current, u.level));
  return {};
}

std::vector<Bytes> initial_feature_records(const MetadataImage& image) {
  std::vector<Bytes> out;
  for (const auto& f : kSupported)
    if (!image.features.contains(std::string(f.name))) out.push_back(feature_level_record(std::string(f.name), f.initial_level));
  return out;
}

void replay(const protocol::FeatureLevelRecord& r, MetadataImage& image) { image.features[r.name] = r.feature_level; }

}  // namespace brokerd::metadata
