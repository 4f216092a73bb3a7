// The mirror-link APIs (brokerd's own, proto/brokerd): CreateMirrorLinks, AlterMirrorLinks
// and PromoteMirrorTopics change metadata, so the active controller answers them (any other
// node forwards them to it); DescribeMirrorLinks is answered by every node from its image and
// the progress of the mirror partitions it leads (a client asks each broker and merges).
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/metadata/mirror_link_requests.h"
#include "brokerd/partitions/mirror_status.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/common/clock.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/protocol/messages/describe_mirror_links_request.h"
#include "brokerd/protocol/messages/describe_mirror_links_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"
#include "kafka/on_controller.h"

namespace brokerd::kafka {
namespace {

using protocol::ErrorCode;

template <typename Result>
void refused(Result& r, const std::string& name, ErrorCode e, const char* message) {
  r.name = name;
  r.error_code = protocol::code(e);
  r.error_message = message;
}

}  // namespace

boost::asio::awaitable<net::Response> handle_create_mirror_links(HandlerContext& ctx) {
  using Req = protocol::CreateMirrorLinksRequest;
  using Resp = protocol::CreateMirrorLinksResponse;
  return on_controller<Req, Resp>(
      ctx, [](metadata::MetadataStore& m, const Req& r) { return metadata::answer_create_mirror_links(m, r); },
      [](const Req& req, Resp& resp, ErrorCode e, const char* message) {
        for (const auto& l : req.links) refused(resp.results.emplace_back(), l.name, e, message);
      });
}

boost::asio::awaitable<net::Response> handle_alter_mirror_links(HandlerContext& ctx) {
  using Req = protocol::AlterMirrorLinksRequest;
  using Resp = protocol::AlterMirrorLinksResponse;
  return on_controller<Req, Resp>(
      ctx, [](metadata::MetadataStore& m, const Req& r) { return metadata::answer_alter_mirror_links(m, r); },
      [](const Req& req, Resp& resp, ErrorCode e, const char* message) {
        for (const auto& l : req.links) refused(resp.results.emplace_back(), l.name, e, message);
      });
}

boost::asio::awaitable<net::Response> handle_promote_mirror_topics(HandlerContext& ctx) {
  using Req = protocol::PromoteMirrorTopicsRequest;
  using Resp = protocol::PromoteMirrorTopicsResponse;
  return on_controller<Req, Resp>(
      ctx, [](metadata::MetadataStore& m, const Req& r) { return metadata::answer_promote_mirror_topics(m, r); },
      [](const Req&, Resp& resp, ErrorCode e, const char* message) {
        resp.error_code = protocol::code(e);
        resp.error_message = message;
      });
}

boost::asio::awaitable<net::Response> handle_describe_mirror_links(HandlerContext& ctx) {
  auto req = ctx.decode<protocol::DescribeMirrorLinksRequest>();
  if (!authorized_cluster(ctx, acl::Operation::describe)) {
    protocol::DescribeMirrorLinksResponse resp;
    resp.broker_id = ctx.services.node_id;
    resp.error_code = protocol::code(ErrorCode::cluster_authorization_failed);
    co_return ctx.respond(resp);
  }
  const auto image = ctx.services.metadata.image();
  const partitions::MirrorStatus& status = ctx.services.mirror_status;
  protocol::DescribeMirrorLinksResponse resp;
  resp.broker_id = ctx.services.node_id;
  std::vector<std::string> names;
  if (req.names) {
    names = *req.names;
  } else {
    for (const auto& [name, link] : image->links) names.push_back(name);
  }
  const auto progress = req.include_partitions ? status.partitions() : std::vector<partitions::MirrorStatus::Entry>{};
  const int64_t now = wall_clock_ms();
  for (const auto& name : names) {
    auto& out = resp.links.emplace_back();
    out.name = name;
    const metadata::MirrorLink* link = image->link(name);
    if (!link) {
      out.error_code = protocol::code(ErrorCode::resource_not_found);
      out.state_message = "mirror link '" + name + "' does not exist";
      continue;
    }
    out.link_id = link->id;
    out.source_bootstrap_servers = link->source_bootstrap;
    out.topics = link->topics;
    out.topic_prefixes = link->topic_prefixes;
    out.exclude_topics = link->exclude_topics;
    out.groups = link->groups;
    out.group_prefixes = link->group_prefixes;
    out.all_groups = link->all_groups;
    out.sync_configs = link->sync_configs;
    out.sync_acls = link->sync_acls;
    out.paused = link->paused;
    const partitions::LinkState state = status.link(name);
    out.state = link->paused ? "paused" : state.state;
    if (!link->paused && !state.message.empty()) out.state_message = state.message;
    out.groups_synced = state.groups_synced;
    std::vector<metadata::TopicPtr> mirrors;
    image->for_each_topic([&](const metadata::TopicPtr& t) {
      if (t->mirror_link == name) mirrors.push_back(t);
    });
    std::sort(mirrors.begin(), mirrors.end(), [](const auto& a, const auto& b) { return a->name < b->name; });
    for (const auto& t : mirrors) {
      auto& mt = out.mirror_topics.emplace_back();
      mt.name = t->name;
      mt.topic_id = t->id;
      mt.source_topic_id = t->source_topic_id;
      mt.partition_count = t->partition_count();
      for (const auto& e : progress) {
        if (e.link != name || e.tp.topic != t->name) continue;
        auto& p = mt.partitions.emplace_back();
        p.partition_index = e.tp.partition;
        p.state = e.state.state;
        if (!e.state.message.empty()) p.state_message = e.state.message;
        p.mirrored_end_offset = e.state.mirrored_end;
        p.source_log_start_offset = e.state.source_log_start;
        p.source_high_watermark = e.state.source_high_watermark;
        p.lag_records = e.state.lag_records();
        p.lag_bytes = e.state.lag_bytes();
        p.lag_ms = e.state.lag_ms(now);
        p.skipped_records = e.state.skipped_records;
        p.last_fetch_age_ms = e.state.last_fetch_ms < 0 ? -1 : now - e.state.last_fetch_ms;
      }
      std::sort(mt.partitions.begin(), mt.partitions.end(),
                [](const auto& a, const auto& b) { return a.partition_index < b.partition_index; });
    }
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
