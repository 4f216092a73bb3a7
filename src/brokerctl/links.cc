// links create, list, describe, pause, resume, delete, promote: mirror links, asked of the
// destination cluster (brokerd's own APIs, proto/brokerd).
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "brokerd/protocol/error_code.h"
#include "brokerd/protocol/messages/alter_mirror_links_request.h"
#include "brokerd/protocol/messages/alter_mirror_links_response.h"
#include "brokerd/protocol/messages/create_mirror_links_request.h"
#include "brokerd/protocol/messages/create_mirror_links_response.h"
#include "brokerd/protocol/messages/describe_mirror_links_request.h"
#include "brokerd/protocol/messages/describe_mirror_links_response.h"
#include "brokerd/protocol/messages/promote_mirror_topics_request.h"
#include "brokerd/protocol/messages/promote_mirror_topics_response.h"

#include "brokerctl/commands.h"

namespace brokerctl {
namespace {

using Described = proto::DescribeMirrorLinksResponse::DescribedLink;
using MirrorPartition = proto::DescribeMirrorLinksResponse::MirrorPartition;

void create(Context& ctx) {
  proto::CreateMirrorLinksRequest req;
  auto& l = req.links.emplace_back();
  l.name = ctx.args.positionals().at(0);
  const auto source = ctx.args.get("source-bootstrap-server");
  if (!source) throw UsageError("--source-bootstrap-server HOST:PORT[,...] is required");
  parse_endpoints(*source);  // a usage error when malformed
  l.source_bootstrap_servers = *source;
  if (auto path = ctx.args.get("source-command-config"))
    for (const auto& [k, v] : read_properties(*path)) {
      auto& c = l.source_configs.emplace_back();
      c.name = k;
      c.value = v;
    }
  l.topics = ctx.args.all("topic");
  l.topic_prefixes = ctx.args.all("topic-prefix");
  if (l.topics.empty() && l.topic_prefixes.empty()) throw UsageError("give --topic or --topic-prefix (repeatable)");
  l.exclude_topics = ctx.args.all("exclude-topic");
  l.groups = ctx.args.all("group");
  l.group_prefixes = ctx.args.all("group-prefix");
  l.all_groups = ctx.args.flag("all-groups");
  l.sync_configs = !ctx.args.flag("no-sync-configs");
  l.sync_acls = !ctx.args.flag("no-sync-acls");
  req.validate_only = ctx.args.flag("validate-only");
  auto resp = ctx.client().any().call<proto::CreateMirrorLinksResponse>(req);
  for (const auto& r : resp.results) check_error(r.error_code, "creating mirror link " + r.name, r.error_message);
  if (ctx.json()) {
    Json j = Json::object();
    j.set("link", l.name).set("created", !req.validate_only);
    print_json(j);
  } else {
    print_text(req.validate_only ? fmt::format("Mirror link {} is valid.", l.name)
                                 : fmt::format("Created mirror link {}: mirror topics appear within the metadata refresh "
                                               "interval; see 'brokerctl links describe {}'.",
                                               l.name, l.name));
  }
}

void alter(Context& ctx, int8_t operation, const char* done) {
  proto::AlterMirrorLinksRequest req;
  auto& l = req.links.emplace_back();
  l.name = ctx.args.positionals().at(0);
  l.operation = operation;
  auto resp = ctx.client().any().call<proto::AlterMirrorLinksResponse>(req);
  for (const auto& r : resp.results) check_error(r.error_code, "mirror link " + r.name, r.error_message);
  if (ctx.json()) {
    Json j = Json::object();
    j.set("link", l.name).set("result", done);
    print_json(j);
  } else {
    print_text(fmt::format("Mirror link {} {}.", l.name, done));
  }
}

// Every broker's answer merged: the link's definition, the least healthy state any broker
// reports, and each broker's partitions.
std::vector<Described> describe_all(Context& ctx, const std::optional<std::vector<std::string>>& names, bool partitions) {
  proto::DescribeMirrorLinksRequest req;
  req.names = names;
  req.include_partitions = partitions;
  std::vector<Described> merged;
  auto merge = [&](const proto::DescribeMirrorLinksResponse& resp) {
    for (const auto& l : resp.links) {
      auto it = std::find_if(merged.begin(), merged.end(), [&](const Described& d) { return d.name == l.name; });
      if (it == merged.end()) {
        merged.push_back(l);
        continue;
      }
      if (it->state == "active" && l.state != "active") {
        it->state = l.state;
        it->state_message = l.state_message;
      } else if (!it->state_message && l.state_message) {
        it->state_message = l.state_message;
      }
      it->groups_synced = std::max(it->groups_synced, l.groups_synced);
      for (const auto& t : l.mirror_topics) {
        auto mt = std::find_if(it->mirror_topics.begin(), it->mirror_topics.end(), [&](const auto& x) { return x.name == t.name; });
        if (mt == it->mirror_topics.end()) {
          it->mirror_topics.push_back(t);
        } else {
          mt->partitions.insert(mt->partitions.end(), t.partitions.begin(), t.partitions.end());
        }
      }
    }
  };
  if (!partitions) {
    merge(ctx.client().any().call<proto::DescribeMirrorLinksResponse>(req));
  } else {
    ctx.client().metadata(std::vector<std::string>{});
    for (int32_t id : ctx.client().node_ids()) {
      try {
        merge(ctx.client().node(id).call<proto::DescribeMirrorLinksResponse>(req));
      } catch (const CommandError&) {
        // A broker that does not answer leads none of the partitions it would show.
      }
    }
  }
  for (auto& l : merged)
    for (auto& t : l.mirror_topics)
      std::sort(t.partitions.begin(), t.partitions.end(),
                [](const MirrorPartition& a, const MirrorPartition& b) { return a.partition_index < b.partition_index; });
  return merged;
}

Json link_json(const Described& l, bool partitions) {
  Json j = Json::object();
  j.set("name", l.name).set("link_id", l.link_id.to_string()).set("source_bootstrap_servers", l.source_bootstrap_servers);
  j.set("state", l.state).set("state_message", l.state_message).set("paused", l.paused);
  auto list = [](const std::vector<std::string>& v) {
    Json a = Json::array();
    for (const auto& s : v) a.push(s);
    return a;
  };
  j.set("topics", list(l.topics)).set("topic_prefixes", list(l.topic_prefixes)).set("exclude_topics", list(l.exclude_topics));
  j.set("groups", list(l.groups)).set("group_prefixes", list(l.group_prefixes)).set("all_groups", l.all_groups);
  j.set("sync_configs", l.sync_configs).set("sync_acls", l.sync_acls).set("groups_synced", l.groups_synced);
  Json topics = Json::array();
  for (const auto& t : l.mirror_topics) {
    Json tj = Json::object();
    tj.set("name", t.name).set("topic_id", t.topic_id.to_string()).set("source_topic_id", t.source_topic_id.to_string());
    tj.set("partition_count", t.partition_count);
    if (partitions) {
      Json ps = Json::array();
      for (const auto& p : t.partitions) {
        Json pj = Json::object();
        pj.set("partition", p.partition_index).set("state", p.state).set("state_message", p.state_message);
        pj.set("mirrored_end_offset", p.mirrored_end_offset).set("source_log_start_offset", p.source_log_start_offset);
        pj.set("source_high_watermark", p.source_high_watermark).set("lag_records", p.lag_records);
        pj.set("lag_bytes", p.lag_bytes).set("lag_ms", p.lag_ms).set("skipped_records", p.skipped_records);
        pj.set("last_fetch_age_ms", p.last_fetch_age_ms);
        ps.push(std::move(pj));
      }
      tj.set("partitions", std::move(ps));
    }
    topics.push(std::move(tj));
  }
  j.set("mirror_topics", std::move(topics));
  return j;
}

void list(Context& ctx) {
  auto links = describe_all(ctx, std::nullopt, false);
  if (ctx.json()) {
    Json arr = Json::array();
    for (const auto& l : links) arr.push(link_json(l, false));
    print_json(arr);
    return;
  }
  if (links.empty()) {
    print_text("No mirror link exists.");
    return;
  }
  Table table({"LINK", "STATE", "SOURCE", "MIRROR-TOPICS", "MESSAGE"});
  for (const auto& l : links)
    table.add({l.name, l.state, l.source_bootstrap_servers, std::to_string(l.mirror_topics.size()),
               l.state_message.value_or("")});
  print_text(table.render());
}

void describe(Context& ctx) {
  const std::string name = ctx.args.positionals().at(0);
  auto links = describe_all(ctx, std::vector<std::string>{name}, true);
  if (links.empty() || links[0].error_code != 0)
    check_error(links.empty() ? static_cast<int16_t>(proto::ErrorCode::resource_not_found) : links[0].error_code,
                "describing mirror link " + name, links.empty() ? std::nullopt : links[0].state_message);
  const auto& l = links[0];
  if (ctx.json()) {
    print_json(link_json(l, true));
    return;
  }
  std::string head = fmt::format("Link {} (id {})\n  source: {}\n  state: {}{}\n", l.name, l.link_id.to_string(),
                                 l.source_bootstrap_servers, l.state,
                                 l.state_message ? " (" + *l.state_message + ")" : std::string());
  head += fmt::format("  topics: {}; prefixes: {}; excluded: {}\n", fmt::join(l.topics, ","), fmt::join(l.topic_prefixes, ","),
                      fmt::join(l.exclude_topics, ","));
  head += fmt::format("  groups: {}; prefixes: {}; all groups: {}; configs synced: {}; ACLs synced: {}\n",
                      fmt::join(l.groups, ","), fmt::join(l.group_prefixes, ","), l.all_groups ? "yes" : "no",
                      l.sync_configs ? "yes" : "no", l.sync_acls ? "yes" : "no");
  print_text(head);
  Table table({"TOPIC", "PARTITION", "STATE", "MIRRORED-END", "SOURCE-HW", "LAG-RECORDS", "LAG-BYTES", "LAG-MS",
               "SKIPPED", "MESSAGE"});
  for (const auto& t : l.mirror_topics) {
    for (const auto& p : t.partitions)
      table.add({t.name, std::to_string(p.partition_index), p.state, std::to_string(p.mirrored_end_offset),
                 std::to_string(p.source_high_watermark), std::to_string(p.lag_records), std::to_string(p.lag_bytes),
                 std::to_string(p.lag_ms), std::to_string(p.skipped_records), p.state_message.value_or("")});
    if (t.partitions.empty()) table.add({t.name, "-", "starting", "", "", "", "", "", "", "no broker reports it yet"});
  }
  print_text(table.empty() ? "No mirror topic yet.\n" : table.render());
}

void promote(Context& ctx) {
  proto::PromoteMirrorTopicsRequest req;
  req.link_name = ctx.args.positionals().at(0);
  const auto topics = ctx.args.all("topic");
  const bool all = ctx.args.flag("all");
  if (topics.empty() == !all) throw UsageError("give --topic (repeatable) or --all");
  if (all) req.topics = std::nullopt;
  else req.topics = topics;
  auto resp = ctx.client().any().call<proto::PromoteMirrorTopicsResponse>(req);
  check_error(resp.error_code, "promoting mirror topics of " + req.link_name, resp.error_message);
  size_t failed = 0;
  Table table({"TOPIC", "RESULT"});
  Json arr = Json::array();
  for (const auto& r : resp.results) {
    const bool ok = r.error_code == 0;
    if (!ok) ++failed;
    table.add({r.name, ok ? "promoted" : describe_error(r.error_code, r.error_message)});
    Json j = Json::object();
    j.set("topic", r.name).set("error", ok ? Json() : Json(proto::error_name(static_cast<proto::ErrorCode>(r.error_code))));
    j.set("message", r.error_message);
    arr.push(std::move(j));
  }
  if (ctx.json()) print_json(arr);
  else print_text(resp.results.empty() ? "The link has no mirror topic.\n" : table.render());
  if (failed > 0) throw CommandError(std::to_string(failed) + " topic(s) not promoted");
}

}  // namespace

std::vector<Command> link_commands() {
  return {{"links", "create",
           "Create a mirror link: this cluster copies topics of the source cluster, offsets and all.",
           {"NAME"},
           0,
           {{"source-bootstrap-server", "HOST:PORT[,...]", "the source cluster"},
            {"source-command-config", "FILE", "client properties for the source (client.id, request.timeout.ms)"},
            {"topic", "NAME", "a source topic to mirror", true},
            {"topic-prefix", "PREFIX", "mirror every source topic whose name starts so", true},
            {"exclude-topic", "NAME", "a topic the prefixes would take but not to mirror", true},
            {"group", "NAME", "a consumer group whose committed offsets to copy", true},
            {"group-prefix", "PREFIX", "copy the offsets of groups whose names start so", true},
            {"all-groups", "", "copy the offsets of every group"},
            {"no-sync-configs", "", "do not copy the source topics' configs"},
            {"no-sync-acls", "", "do not copy the source's ACLs on the mirrored topics and groups"},
            {"validate-only", "", "check the link without creating it"}},
           "Mirror topics are created here with the source's partition count and configs, and are read-only to\n"
           "producers until promoted. Each mirror partition's leader fetches from the source's leader and\n"
           "appends the source's batches at the same offsets.",
           create},
          {"links", "list", "List the mirror links.", {}, 0, {}, "", list},
          {"links", "describe",
           "Show a link's state and, per mirror partition, where it stands against the source.",
           {"NAME"},
           0,
           {},
           "LAG-MS is the recovery point: everything the source held that long ago is mirrored.",
           describe},
          {"links", "pause", "Stop copying (the mirror topics stay read-only).", {"NAME"}, 0, {}, "",
           [](Context& ctx) { alter(ctx, 0, "paused"); }},
          {"links", "resume", "Copy again from where each mirror ends.", {"NAME"}, 0, {}, "",
           [](Context& ctx) { alter(ctx, 1, "resumed"); }},
          {"links", "delete", "Delete a link that has no mirror topic left (promote or delete them first).", {"NAME"}, 0,
           {}, "", [](Context& ctx) { alter(ctx, 2, "deleted"); }},
          {"links", "promote",
           "Make mirror topics ordinary, writable topics: copying stops, producers write at the next offset.",
           {"NAME"},
           0,
           {{"topic", "NAME", "a mirror topic of the link", true}, {"all", "", "every mirror topic of the link"}},
           "For a failover: promote, then point producers and consumers at this cluster; consumer groups\n"
           "continue from the offsets the link copied.",
           promote}};
}

}  // namespace brokerctl
