// The controller's feature changes (UpdateFeatures): checked against the image under the write
// lock, committed together as FeatureLevelRecords.
#include <set>

#include "brokerd/common/logger.h"
#include "brokerd/metadata/feature_requests.h"
#include "brokerd/metadata/features.h"
#include "brokerd/metadata/metadata_store.h"
#include "metadata/metadata_records.h"

namespace brokerd::metadata {

using protocol::ErrorCode;

MetadataStore::ChangeAnswer MetadataStore::update_features(const std::vector<FeatureUpdate>& updates,
                                                            bool validate_only) {
  if (!leads()) return {ErrorCode::not_controller, "This node is not the active controller."};
  std::lock_guard lock(write_mutex_);
  auto current = image();
  std::vector<Bytes> records;
  for (const auto& u : updates) {
    FeatureRefusal r = check_feature_update(*current, u);
    if (r.error != ErrorCode::none) return {r.error, std::move(r.message)};
    records.push_back(feature_level_record(u.feature, u.level));
  }
  if (validate_only || records.empty()) return {};
  ChangeAnswer answer;
  answer.error = commit(records, &answer.message);
  if (answer.error == ErrorCode::none)
    for (const auto& u : updates)
      module_logger("metadata")->info("feature {} finalized at level {} (was {})", u.feature, u.level,
                                     finalized_level(*current, u.feature));
  return answer;
}

protocol::UpdateFeaturesResponse answer_update_features(MetadataStore& store, const protocol::UpdateFeaturesRequest& req) {
  std::vector<FeatureUpdate> updates;
  MetadataStore::ChangeAnswer answer;
  std::set<std::string> seen;
  for (const auto& f : req.feature_updates) {
    if (!seen.insert(f.feature).second) {
      answer = {ErrorCode::invalid_request, "The feature " + f.feature + " is named twice."};
      break;
    }
    UpgradeType type = UpgradeType::upgrade;
    if (f.allow_downgrade) type = UpgradeType::safe_downgrade;
    if (f.upgrade_type >= 1 && f.upgrade_type <= 3) {
      if (f.upgrade_type != 1) type = static_cast<UpgradeType>(f.upgrade_type);
    } else {
      answer = {ErrorCode::invalid_request, "Unknown upgrade type " + std::to_string(f.upgrade_type) + " for " + f.feature + "."};
      break;
    }
    updates.push_back({f.feature, f.max_version_level, type});
  }
  if (answer.error == ErrorCode::none) answer = store.update_features(updates, req.validate_only);
  protocol::UpdateFeaturesResponse resp;
  fill_update_features_error(req, resp, answer.error,
                             answer.error == ErrorCode::none ? std::nullopt : std::optional<std::string>(answer.message));
  return resp;
}

void fill_update_features_error(const protocol::UpdateFeaturesRequest& req, protocol::UpdateFeaturesResponse& resp,
                                ErrorCode error, const std::optional<std::string>& message) {
  resp.error_code = protocol::code(error);
  resp.error_message = message;
  for (const auto& f : req.feature_updates) {
    auto& r = resp.results.emplace_back();
    r.feature = f.feature;
    r.error_code = resp.error_code;
    r.error_message = message;
  }
}

}  // namespace brokerd::metadata
