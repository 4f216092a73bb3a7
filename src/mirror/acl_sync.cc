#include "acl_sync.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/common/logger.h"
#include "brokerd/protocol/error_code.h"
#include "brokerd/protocol/messages/describe_acls_request.h"
#include "brokerd/protocol/messages/describe_acls_response.h"

namespace brokerd::mirror {
namespace {

using protocol::ErrorCode;

constexpr int16_t kDescribeAclsVersion = 2;

// Every name a prefix can match is covered by one of `prefixes`, and none of `excluded`.
bool covered(std::string_view prefix, const std::vector<std::string>& prefixes, const std::vector<std::string>& excluded) {
  const bool inside = std::any_of(prefixes.begin(), prefixes.end(), [&](const std::string& p) { return prefix.starts_with(p); });
  const bool excludes = std::any_of(excluded.begin(), excluded.end(), [&](const std::string& e) { return std::string_view(e).starts_with(prefix); });
  return inside && !excludes;
}

// FNV-1a, 64 bits, from `basis`.
uint64_t fnv(std::string_view bytes, uint64_t basis) {
  uint64_t h = basis;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

bool copies_acl(const metadata::MirrorLink& link, const acl::Binding& b) {
  const bool literal = b.pattern_type == acl::PatternType::literal;
  const bool prefixed = b.pattern_type == acl::PatternType::prefixed;
  switch (b.resource_type) {
    case acl::ResourceType::topic:
      if (literal) return b.resource_name != acl::kWildcard && link.mirrors_topic(b.resource_name);
      return prefixed && !b.resource_name.starts_with("__") &&
             covered(b.resource_name, link.topic_prefixes, link.exclude_topics);
    case acl::ResourceType::group:
      if (link.all_groups) return literal || prefixed;
      if (literal) return b.resource_name != acl::kWildcard && link.mirrors_group(b.resource_name);
      return prefixed && covered(b.resource_name, link.group_prefixes, {});
    default:
      return false;
  }
}

protocol::Uuid copy_id(const protocol::Uuid& link, const acl::Binding& b) {
  std::string key(reinterpret_cast<const char*>(link.bytes.data()), link.bytes.size());
  key += fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", static_cast<int>(b.resource_type), b.resource_name,
                     static_cast<int>(b.pattern_type), b.principal, b.host, static_cast<int>(b.operation),
                     static_cast<int>(b.permission));
  const uint64_t hi = fnv(key, 0xcbf29ce484222325ULL), lo = fnv(key, 0x84222325cbf29ce4ULL);
  protocol::Uuid id;
  std::memcpy(id.bytes.data(), &hi, 8);
  std::memcpy(id.bytes.data() + 8, &lo, 8);
  if (id.is_zero()) id.bytes[0] = 1;
  return id;
}

std::string sync_acls(const metadata::MirrorLink& link, const SourceMetadata& source, SourceCluster& client,
                      metadata::MetadataStore& store) {
  static auto log = module_logger("mirror");
  if (source.brokers.empty()) return {};
  protocol::DescribeAclsRequest req;
  req.resource_type_filter = static_cast<int8_t>(acl::ResourceType::any);
  req.resource_name_filter = std::nullopt;
  req.pattern_type_filter = static_cast<int8_t>(acl::PatternType::any);
  req.principal_filter = std::nullopt;
  req.host_filter = std::nullopt;
  req.operation = static_cast<int8_t>(acl::Operation::any);
  req.permission_type = static_cast<int8_t>(acl::Permission::any);
  std::string error;
  std::optional<protocol::DescribeAclsResponse> resp;
  for (const auto& [id, broker] : source.brokers)
    if ((resp = client.call<protocol::DescribeAclsResponse>(broker, kDescribeAclsVersion, req, error))) break;
  if (!resp) return "cannot read the source's ACLs: " + error;
  std::vector<acl::Binding> wanted;
  const auto code = static_cast<ErrorCode>(resp->error_code);
  if (code == ErrorCode::cluster_authorization_failed)
    return "cannot read the source's ACLs: the link's user needs DESCRIBE on the source's cluster";
  if (code != ErrorCode::none && code != ErrorCode::security_disabled)  // no authorizer there: no ACLs
    return fmt::format("cannot read the source's ACLs: {}", resp->error_message.value_or(std::string(protocol::error_name(code))));
  for (const auto& r : resp->resources)
    for (const auto& a : r.acls) {
      acl::Binding b = acl::binding_of({}, r.resource_type, r.resource_name, r.pattern_type, a.principal, a.host,
                                       a.operation, a.permission_type);
      if (!copies_acl(link, b) || acl::invalid_binding(b)) continue;
      b.id = copy_id(link.id, b);
      wanted.push_back(std::move(b));
    }

  const auto image = store.image();
  std::vector<acl::Binding> create;
  for (const auto& b : wanted) {
    const bool here = std::any_of(image->acls->bindings.begin(), image->acls->bindings.end(),
                                  [&](const auto& entry) { return entry.second == b; });
    if (!here) create.push_back(b);
  }
  std::vector<acl::Filter> remove;
  for (const auto& [id, b] : image->acls->bindings) {
    if (!copies_acl(link, b) || id != copy_id(link.id, b)) continue;  // not this link's copy
    if (std::any_of(wanted.begin(), wanted.end(), [&](const acl::Binding& w) { return w == b; })) continue;
    remove.push_back(acl::Filter{b.resource_type, b.resource_name, b.pattern_type, b.principal, b.host, b.operation,
                                 b.permission});
  }
  std::string problem;
  if (!create.empty()) {
    const auto answers = store.create_acls(create);
    size_t made = 0;
    for (const auto& a : answers) {
      if (a.error == ErrorCode::none) ++made;
      else if (problem.empty()) problem = "cannot copy an ACL: " + a.message;
    }
    if (made) log->info("link {}: copied {} ACL binding(s) from the source", link.name, made);
  }
  if (!remove.empty()) {
    const auto answers = store.delete_acls(remove);
    size_t removed = 0;
    for (const auto& d : answers) {
      if (d.answer.error == ErrorCode::none) removed += d.removed.size();
      else if (problem.empty()) problem = "cannot remove a copied ACL: " + d.answer.message;
    }
    if (removed) log->info("link {}: removed {} copied ACL binding(s) the source no longer has", link.name, removed);
  }
  return problem;
}

}  // namespace brokerd::mirror
