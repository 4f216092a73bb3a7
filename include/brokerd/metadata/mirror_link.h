#pragma once
// A mirror link: this cluster copies topics of another (the source) byte for byte, at the
// same offsets, and optionally the committed offsets of its consumer groups. The link is
// metadata (MirrorLinkRecord), so it survives restarts and follows the controller; the
// topics it created are marked as its mirrors (MirrorTopicRecord) and are read-only to
// producers until promoted.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "brokerd/protocol/uuid.h"

namespace brokerd::metadata {

struct MirrorLink {
  std::string name;
  protocol::Uuid id;
  std::string source_bootstrap;                      // host:port[,host:port...]
  std::map<std::string, std::string> source_configs;  // client settings for the source
  std::vector<std::string> topics;                    // exact names
  std::vector<std::string> topic_prefixes;
  std::vector<std::string> exclude_topics;
  std::vector<std::string> groups;
  std::vector<std::string> group_prefixes;
  bool all_groups = false;
  bool sync_configs = true;  // keep the mirror topics' configs equal to the source's
  // Copy the source's ACLs on what the link mirrors (mirror/acl_sync.h). Links created
  // before the setting existed have it off.
  bool sync_acls = false;
  bool paused = false;

  // The source topic `name` is mirrored by this link (internal topics never are).
  bool mirrors_topic(std::string_view name) const;
  // The committed offsets of source group `group` are copied.
  bool mirrors_group(std::string_view group) const;
  bool operator==(const MirrorLink&) const = default;
};

// Operations of AlterMirrorLinks.
enum class LinkOperation : int8_t { pause = 0, resume = 1, remove = 2 };

// Checks a link as created: a valid name, a bootstrap list, at least one topic filter, known
// client settings. Returns the problem, or an empty string.
std::string check_link(const MirrorLink& link);

// The source settings kept sealed (sasl.password, ssl.key.password, sasl.jaas.config).
bool is_secret_setting(std::string_view key);

// The topic configs a mirror copies from its source (retention, cleanup, sizes, ...): not
// the ones that are about where replicas live or how they are throttled.
bool mirrored_config(std::string_view name);

// Why a client may not write to `topic`, a mirror of `link`: it is read-only until promoted.
std::string read_only_mirror(std::string_view topic, std::string_view link);

}  // namespace brokerd::metadata
