// The controller's changes of mirror links: create, pause, resume, remove, and promoting a
// link's mirror topics to ordinary ones.
// Also the replay of their records into the image (record_replay.h).
#include <fmt/format.h>

#include "brokerd/auth/sealed_secret.h"
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/common/logger.h"
#include "metadata/metadata_records.h"
#include "metadata/record_replay.h"

namespace brokerd::metadata {

using protocol::ErrorCode;

namespace {

MetadataStore::ChangeAnswer not_controller() {
  return {ErrorCode::not_controller, "This node is not the active controller."};
}

// The mirror topics of `link`, by name.
std::vector<TopicPtr> mirrors_of(const MetadataImage& image, const std::string& link) {
  std::vector<TopicPtr> out;
  image.for_each_topic([&](const TopicPtr& t) {
    if (t->mirror_link == link) out.push_back(t);
  });
  std::sort(out.begin(), out.end(), [](const TopicPtr& a, const TopicPtr& b) { return a->name < b->name; });
  return out;
}

}  // namespace

MetadataStore::ChangeAnswer MetadataStore::create_link(MirrorLink link, bool validate_only) {
  if (auto why = check_link(link); !why.empty()) return {ErrorCode::invalid_request, why};
  if (!leads()) return not_controller();
  std::lock_guard lock(write_mutex_);
  if (image()->link(link.name))
    return {ErrorCode::invalid_request, fmt::format("mirror link '{}' already exists", link.name)};
  // Passwords are kept sealed with password.encoder.secret, never in clear.
  for (auto& [key, value] : link.source_configs) {
    if (!is_secret_setting(key) || auth::is_sealed(value)) continue;
    if (password_secret_.empty())
      return {ErrorCode::invalid_config,
              fmt::format("the source setting {} is a secret: set password.encoder.secret (the same on every node) to "
                          "keep it sealed in the metadata log",
                          key)};
    if (!validate_only) value = auth::seal(value, password_secret_);
  }
  if (validate_only) return {};
  link.id = protocol::Uuid::random();
  ChangeAnswer answer;
  answer.error = commit({mirror_link_record(link)}, &answer.message);
  if (answer.error == ErrorCode::none)
    module_logger("mirror")->info("created mirror link {} from {}", link.name, link.source_bootstrap);
  return answer;
}

MetadataStore::ChangeAnswer MetadataStore::alter_link(const std::string& name, LinkOperation operation) {
  if (!leads()) return not_controller();
  std::lock_guard lock(write_mutex_);
  auto current = image();
  const MirrorLink* existing = current->link(name);
  if (!existing) return {ErrorCode::resource_not_found, fmt::format("mirror link '{}' does not exist", name)};
  Bytes record;
  switch (operation) {
    case LinkOperation::pause:
    case LinkOperation::resume: {
      MirrorLink next = *existing;
      next.paused = operation == LinkOperation::pause;
      if (next == *existing) return {};
      record = mirror_link_record(next);
      break;
    }
    case LinkOperation::remove: {
      auto topics = mirrors_of(*current, name);
      if (!topics.empty())
        return {ErrorCode::invalid_request,
                fmt::format("mirror link '{}' still has {} mirror topic(s) (the first is '{}'): promote or delete them "
                            "first",
                            name, topics.size(), topics.front()->name)};
      record = remove_mirror_link_record(name);
      break;
    }
    default:
      return {ErrorCode::invalid_request, fmt::format("unknown link operation {}", static_cast<int>(operation))};
  }
  ChangeAnswer answer;
  answer.error = commit({record}, &answer.message);
  if (answer.error == ErrorCode::none)
    module_logger("mirror")->info("mirror link {}: {}", name,
                                  operation == LinkOperation::pause    ? "paused"
                                  : operation == LinkOperation::resume ? "resumed"
                                                                       : "removed");
  return answer;
}

std::pair<MetadataStore::ChangeAnswer, std::vector<std::pair<std::string, MetadataStore::ChangeAnswer>>>
MetadataStore::promote_mirror_topics(const std::string& link, const std::optional<std::vector<std::string>>& topics) {
  std::vector<std::pair<std::string, ChangeAnswer>> results;
  if (!leads()) return {not_controller(), results};
  std::lock_guard lock(write_mutex_);
  auto current = image();
  if (!current->link(link))
    return {{ErrorCode::resource_not_found, fmt::format("mirror link '{}' does not exist", link)}, results};
  std::vector<TopicPtr> chosen;
  if (!topics) {
    chosen = mirrors_of(*current, link);
    for (const auto& t : chosen) results.push_back({t->name, {}});
  } else {
    for (const auto& name : *topics) {
      TopicPtr t = current->topic_ptr(name);
      if (!t) {
        results.push_back({name, {ErrorCode::unknown_topic_or_partition, "The topic does not exist."}});
      } else if (t->mirror_link != link) {
        results.push_back({name, {ErrorCode::invalid_request,
                                  t->mirror_link.empty()
                                      ? std::string("The topic is not a mirror topic.")
                                      : fmt::format("The topic is a mirror of link '{}'.", t->mirror_link)}});
      } else {
        results.push_back({name, {}});
        chosen.push_back(t);
      }
    }
  }
  std::vector<Bytes> records;
  for (const auto& t : chosen) {
    TopicMetadata promoted = *t;
    promoted.mirror_link.clear();
    records.push_back(mirror_topic_record(promoted));
  }
  if (records.empty()) return {{}, results};
  ChangeAnswer whole;
  whole.error = commit(records, &whole.message);
  for (auto& [name, answer] : results)
    if (answer.error == ErrorCode::none && whole.error != ErrorCode::none) answer = whole;
  if (whole.error == ErrorCode::none)
    for (const auto& t : chosen) module_logger("mirror")->info("promoted mirror topic {} of link {}", t->name, link);
  return {{}, results};
}

void replay(const protocol::MirrorLinkRecord& r, MetadataImage& image) {
  MirrorLink l;
  l.name = r.name;
  l.id = r.link_id;
  l.source_bootstrap = r.source_bootstrap_servers;
  for (const auto& c : r.source_configs) l.source_configs[c.name] = c.value;
  l.topics = r.topics;
  l.topic_prefixes = r.topic_prefixes;
  l.exclude_topics = r.exclude_topics;
  l.groups = r.groups;
  l.group_prefixes = r.group_prefixes;
  l.all_groups = r.all_groups;
  l.sync_configs = r.sync_configs;
  l.sync_acls = r.sync_acls;
  l.paused = r.paused;
  image.links[l.name] = std::move(l);
}

void replay(const protocol::RemoveMirrorLinkRecord& r, MetadataImage& image) {
  image.links.erase(r.name);
}

void replay(const protocol::MirrorTopicRecord& r, MetadataImage& image) {
  auto t = copy_topic(image, r.topic_id);
  if (!t) return;
  t->mirror_link = r.link_name.value_or("");
  t->source_topic_id = r.source_topic_id;
  image.put_topic(std::move(t));
}

}  // namespace brokerd::metadata
