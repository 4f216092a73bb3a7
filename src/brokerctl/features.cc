// features describe, upgrade, downgrade, disable: the feature levels the brokers support and the
// cluster has finalized (ApiVersions), changed with UpdateFeatures, in the shape of Kafka's
// kafka-features.sh.
#include <fmt/format.h>

#include "brokerd/protocol/messages/api_versions_request.h"
#include "brokerd/protocol/messages/api_versions_response.h"
#include "brokerd/protocol/messages/update_features_request.h"
#include "brokerd/protocol/messages/update_features_response.h"

#include "brokerctl/commands.h"

namespace brokerctl {
namespace {

constexpr int8_t kUpgrade = 1, kSafeDowngrade = 2, kUnsafeDowngrade = 3;

void describe(Context& ctx) {
  proto::ApiVersionsRequest req;
  req.client_software_name = "brokerctl";
  req.client_software_version = "0.1.0";
  auto resp = ctx.client().any().call<proto::ApiVersionsResponse>(req, int16_t{3});
  check_error(resp.error_code, "describing features");
  Json arr = Json::array();
  Table table({"FEATURE", "SUPPORTED_MIN", "SUPPORTED_MAX", "FINALIZED", "EPOCH"});
  for (const auto& s : resp.supported_features) {
    int16_t finalized = 0;
    for (const auto& f : resp.finalized_features)
      if (f.name == s.name) finalized = f.max_version_level;
    Json j = Json::object();
    j.set("feature", s.name)
        .set("supported_min", s.min_version)
        .set("supported_max", s.max_version)
        .set("finalized", finalized)
        .set("epoch", resp.finalized_features_epoch);
    arr.push(j);
    table.add({s.name, std::to_string(s.min_version), std::to_string(s.max_version), std::to_string(finalized),
               std::to_string(resp.finalized_features_epoch)});
  }
  if (ctx.json()) print_json(arr);
  else print_text(table.empty() ? "The broker supports no features.\n" : table.render());
}

void update(Context& ctx, int8_t type, const char* what) {
  proto::UpdateFeaturesRequest req;
  req.validate_only = ctx.args.flag("dry-run");
  for (const auto& [name, text] : ctx.args.key_values("feature", "NAME=LEVEL")) {
    const auto level = parse_int(text, 0, INT16_MAX);
    if (!level) throw UsageError("--feature takes NAME=LEVEL, not '" + name + "=" + text + "'");
    auto& u = req.feature_updates.emplace_back();
    u.feature = name;
    u.max_version_level = static_cast<int16_t>(*level);
    u.upgrade_type = type;
  }
  for (const auto& name : ctx.args.all("disable")) {
    auto& u = req.feature_updates.emplace_back();
    u.feature = name;
    u.max_version_level = 0;
    u.upgrade_type = ctx.args.flag("unsafe") ? kUnsafeDowngrade : kSafeDowngrade;
  }
  if (req.feature_updates.empty()) throw UsageError("name at least one --feature NAME=LEVEL");
  auto resp = ctx.client().any().call<proto::UpdateFeaturesResponse>(req);
  check_error(resp.error_code, std::string(what) + " features", resp.error_message);
  for (const auto& r : resp.results) check_error(r.error_code, std::string(what) + " " + r.feature, r.error_message);
  if (!ctx.json()) print_text(req.validate_only ? "The change is valid (nothing changed)." : "Features updated.");
}

void upgrade(Context& ctx) { update(ctx, kUpgrade, "upgrading"); }
void downgrade(Context& ctx) { update(ctx, ctx.args.flag("unsafe") ? kUnsafeDowngrade : kSafeDowngrade, "downgrading"); }

}  // namespace

std::vector<Command> feature_commands() {
  const OptionSpec dry_run{"dry-run", "", "check the change without making it"};
  return {{"features", "describe", "The features the brokers support and the levels the cluster has finalized.", {}, 0,
           {}, "", describe},
          {"features", "upgrade", "Raise features' finalized levels.", {}, 0,
           {{"feature", "NAME=LEVEL", "e.g. transaction.version=2", true}, dry_run},
           "transaction.version 2 is KIP-890 part 2: clients that know it bump their epoch at every commit and abort, "
           "and add partitions with Produce v12; clients that do not keep working as at level 1.",
           upgrade},
          {"features", "downgrade", "Lower features' finalized levels (0 disables a feature).", {}, 0,
           {{"feature", "NAME=LEVEL", "e.g. transaction.version=1", true},
            {"disable", "NAME", "set the feature to level 0", true},
            {"unsafe", "", "an unsafe downgrade (Kafka's UNSAFE_DOWNGRADE)"},
            dry_run},
           "", downgrade}};
}

}  // namespace brokerctl
