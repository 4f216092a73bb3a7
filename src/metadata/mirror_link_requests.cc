#include "brokerd/metadata/mirror_link_requests.h"

#include "brokerd/metadata/metadata_store.h"

namespace brokerd::metadata {

namespace {

template <typename Result>
void fill(Result& r, const MetadataStore::ChangeAnswer& a) {
  r.error_code = protocol::code(a.error);
  if (a.error != protocol::ErrorCode::none) r.error_message = a.message;
}

}  // namespace

protocol::CreateMirrorLinksResponse answer_create_mirror_links(MetadataStore& store,
                                                               const protocol::CreateMirrorLinksRequest& req) {
  protocol::CreateMirrorLinksResponse resp;
  for (const auto& l : req.links) {
    MirrorLink link;
    link.name = l.name;
    link.source_bootstrap = l.source_bootstrap_servers;
    for (const auto& c : l.source_configs) link.source_configs[c.name] = c.value;
    link.topics = l.topics;
    link.topic_prefixes = l.topic_prefixes;
    link.exclude_topics = l.exclude_topics;
    link.groups = l.groups;
    link.group_prefixes = l.group_prefixes;
    link.all_groups = l.all_groups;
    link.sync_configs = l.sync_configs;
    link.sync_acls = l.sync_acls;
    auto& r = resp.results.emplace_back();
    r.name = l.name;
    fill(r, store.create_link(std::move(link), req.validate_only));
  }
  return resp;
}

protocol::AlterMirrorLinksResponse answer_alter_mirror_links(MetadataStore& store,
                                                             const protocol::AlterMirrorLinksRequest& req) {
  protocol::AlterMirrorLinksResponse resp;
  for (const auto& l : req.links) {
    auto& r = resp.results.emplace_back();
    r.name = l.name;
    fill(r, store.alter_link(l.name, static_cast<LinkOperation>(l.operation)));
  }
  return resp;
}

protocol::PromoteMirrorTopicsResponse answer_promote_mirror_topics(MetadataStore& store,
                                                                   const protocol::PromoteMirrorTopicsRequest& req) {
  auto [whole, results] = store.promote_mirror_topics(req.link_name, req.topics);
  protocol::PromoteMirrorTopicsResponse resp;
  fill(resp, whole);
  for (const auto& [name, answer] : results) {
    auto& r = resp.results.emplace_back();
    r.name = name;
    fill(r, answer);
  }
  return resp;
}

}  // namespace brokerd::metadata
