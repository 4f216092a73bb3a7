// groups list | describe | reset-offsets | delete
#include <algorithm>
#include <ctime>

#include "brokerctl/checks.h"
#include "brokerctl/commands.h"
#include "brokerctl/offsets.h"
#include "brokerd/protocol/messages/consumer_protocol_assignment.h"

namespace brokerctl {
namespace {

using Group = proto::DescribeGroupsResponse::DescribedGroup;

Group describe_group(Context& ctx, const std::string& name) {
  auto& conn = ctx.client().coordinator(name);
  proto::DescribeGroupsRequest req;
  req.groups = {name};
  auto resp = conn.call<proto::DescribeGroupsResponse>(req);
  if (resp.groups.empty()) throw CommandError("describing group '" + name + "': empty response");
  auto g = resp.groups.front();
  check_error(g.error_code, "describing group '" + name + "'");
  return g;
}

// The partitions a member was given, from its ConsumerProtocolAssignment.
std::vector<TopicPartition> assignment_of(const Group& g, const proto::DescribeGroupsResponse::DescribedGroupMember& m) {
  std::vector<TopicPartition> out;
  if (g.protocol_type != "consumer" || m.member_assignment.size() < 2) return out;
  try {
    proto::Reader r(m.member_assignment);
    int16_t version = r.i16();
    proto::ConsumerProtocolAssignment a;
    a.decode(r, std::min<int16_t>(version, proto::ConsumerProtocolAssignment::max_version));
    for (const auto& tp : a.assigned_partitions) {
      for (int32_t p : tp.partitions) out.emplace_back(tp.topic, p);
    }
  } catch (const proto::DecodeError&) {
    // Not a consumer assignment we can read; show the member without partitions.
  }
  return out;
}

void list(Context& ctx) {
  auto& client = ctx.client();
  client.metadata(std::vector<std::string>{});
  std::map<std::string, proto::ListGroupsResponse::ListedGroup> groups;
  for (int32_t node : client.node_ids()) {
    proto::ListGroupsRequest req;
    auto resp = client.node(node).call<proto::ListGroupsResponse>(req);
    check_error(resp.error_code, "listing groups on broker " + std::to_string(node));
    for (const auto& g : resp.groups) groups[g.group_id] = g;
  }
  if (ctx.json()) {
    Json arr = Json::array();
    for (const auto& [id, g] : groups) {
      Json j = Json::object();
      j.set("group", id).set("state", g.group_state).set("protocol_type", g.protocol_type);
      arr.push(std::move(j));
    }
    print_json(arr);
    return;
  }
  Table table({"GROUP", "STATE", "PROTOCOL-TYPE"});
  for (const auto& [id, g] : groups) table.add({id, g.group_state.empty() ? "-" : g.group_state, g.protocol_type});
  print_text(table.render());
}

void describe(Context& ctx) {
  std::string name = ctx.args.positionals()[0];
  check_group_name(name);
  auto g = describe_group(ctx, name);
  auto committed = fetch_committed(ctx.client(), name);
  if (g.group_state == "Dead" && committed.empty()) {
    throw CommandError("group '" + name + "': GROUP_ID_NOT_FOUND: the group does not exist");
  }
  // Every partition that is committed or assigned, with its owner.
  std::map<TopicPartition, const proto::DescribeGroupsResponse::DescribedGroupMember*> owner;
  for (const auto& [tp, off] : committed) owner[tp] = nullptr;
  for (const auto& m : g.members) {
    for (const auto& tp : assignment_of(g, m)) owner[tp] = &m;
  }
  std::vector<TopicPartition> tps;
  for (const auto& [tp, m] : owner) tps.push_back(tp);
  auto end = list_offsets(ctx.client(), tps, kLatest);

  auto committed_of = [&](const TopicPartition& tp) -> int64_t {
    auto it = committed.find(tp);
    return it == committed.end() ? -1 : it->second;
  };
  if (ctx.json()) {
    Json members = Json::array();
    for (const auto& m : g.members) {
      Json parts = Json::array();
      for (const auto& [t, p] : assignment_of(g, m)) {
        Json pj = Json::object();
        pj.set("topic", t).set("partition", p);
        parts.push(std::move(pj));
      }
      Json mj = Json::object();
      mj.set("member_id", m.member_id).set("group_instance_id", m.group_instance_id).set("client_id", m.client_id)
          .set("client_host", m.client_host).set("assignment", std::move(parts));
      members.push(std::move(mj));
    }
    Json offsets = Json::array();
    for (const auto& [tp, m] : owner) {
      int64_t c = committed_of(tp);
      Json oj = Json::object();
      oj.set("topic", tp.first).set("partition", tp.second).set("committed_offset", c >= 0 ? Json(c) : Json())
          .set("log_end_offset", end.at(tp)).set("lag", c >= 0 ? Json(std::max<int64_t>(0, end.at(tp) - c)) : Json())
          .set("member_id", m ? Json(m->member_id) : Json());
      offsets.push(std::move(oj));
    }
    Json out = Json::object();
    out.set("group", name).set("state", g.group_state).set("protocol_type", g.protocol_type)
        .set("protocol", g.protocol_data).set("members", std::move(members)).set("offsets", std::move(offsets));
    print_json(out);
    return;
  }
  std::string head = "Group: " + name + "\tState: " + g.group_state + "\tProtocol: " +
                     (g.protocol_data.empty() ? "-" : g.protocol_data) + "\tMembers: " + std::to_string(g.members.size()) + "\n\n";
  Table table({"TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"});
  for (const auto& [tp, m] : owner) {
    int64_t c = committed_of(tp);
    table.add({tp.first, std::to_string(tp.second), c >= 0 ? std::to_string(c) : "-", std::to_string(end.at(tp)),
               c >= 0 ? std::to_string(std::max<int64_t>(0, end.at(tp) - c)) : "-", m ? m->member_id : "-",
               m ? m->client_host : "-", m ? m->client_id : "-"});
  }
  print_text(head + table.render());
}

// "2024-05-01T12:30:00[.123][Z|+02:00]" (seconds and zone optional; no zone = UTC) -> ms.
std::optional<int64_t> parse_datetime(const std::string& s) {
  int y, mo, d, h = 0, mi = 0, sec = 0, ms = 0, n = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || n != 10) return std::nullopt;
  size_t pos = 10;
  if (pos < s.size() && s[pos] == 'T') {
    if (std::sscanf(s.c_str() + pos, "T%2d:%2d%n", &h, &mi, &n) != 2 || n != 6) return std::nullopt;
    pos += 6;
    if (pos < s.size() && s[pos] == ':') {
      if (std::sscanf(s.c_str() + pos, ":%2d%n", &sec, &n) != 1 || n != 3) return std::nullopt;
      pos += 3;
      if (pos < s.size() && s[pos] == '.') {
        if (std::sscanf(s.c_str() + pos, ".%3d%n", &ms, &n) != 1 || n != 4) return std::nullopt;
        pos += 4;
      }
    }
  }
  int offset_min = 0;
  if (pos < s.size() && s[pos] == 'Z') {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (std::sscanf(s.c_str() + pos + 1, "%2d:%2d%n", &oh, &om, &n) != 2 || n != 5) return std::nullopt;
    offset_min = (s[pos] == '-' ? -1 : 1) * (oh * 60 + om);
    pos += 6;
  }
  if (pos != s.size() || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return std::nullopt;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  int64_t secs = static_cast<int64_t>(::timegm(&tm)) - offset_min * 60;
  return secs * 1000 + ms;
}

void reset_offsets(Context& ctx) {
  const auto& a = ctx.args;
  std::string name = a.positionals()[0];
  check_group_name(name);
  auto topic = a.get("topic");
  if (!topic) throw UsageError("missing option --topic T");
  check_topic_name(*topic);
  int specs = a.flag("to-earliest") + a.flag("to-latest") + a.flag("to-offset") + a.flag("to-datetime") + a.flag("shift-by");
  if (specs != 1) {
    throw UsageError("give exactly one of --to-earliest, --to-latest, --to-offset N, --to-datetime ISO, --shift-by N");
  }
  if (a.flag("dry-run") && a.flag("execute")) throw UsageError("--dry-run and --execute exclude each other");
  auto to_offset = a.get_int("to-offset", 0, INT64_MAX);
  auto shift = a.get_int("shift-by", INT64_MIN / 2, INT64_MAX / 2);
  std::optional<int64_t> when;
  if (auto text = a.get("to-datetime")) {
    when = parse_datetime(*text);
    if (!when) throw UsageError("--to-datetime expects YYYY-MM-DDTHH:mm:SS[.sss][Z|+HH:MM], got '" + *text + "'");
  }
  bool execute = a.flag("execute");

  auto g = describe_group(ctx, name);
  if (g.group_state != "Empty" && g.group_state != "Dead") {
    throw CommandError("group '" + name + "': offsets can only be reset while the group is inactive (Empty), but it is " +
                       g.group_state);
  }
  std::vector<TopicPartition> tps;
  for (int32_t p : topic_partitions(ctx.client(), *topic)) tps.emplace_back(*topic, p);
  auto earliest = list_offsets(ctx.client(), tps, kEarliest);
  auto latest = list_offsets(ctx.client(), tps, kLatest);
  auto committed = fetch_committed(ctx.client(), name, {*topic});
  std::map<TopicPartition, int64_t> target;
  std::map<TopicPartition, int64_t> at_time;
  if (when) at_time = list_offsets(ctx.client(), tps, *when);
  for (const auto& tp : tps) {
    int64_t lo = earliest.at(tp), hi = latest.at(tp);
    auto cit = committed.find(tp);
    int64_t current = cit != committed.end() && cit->second >= 0 ? cit->second : -1;
    int64_t t;
    if (a.flag("to-earliest")) t = lo;
    else if (a.flag("to-latest")) t = hi;
    else if (to_offset) t = *to_offset;
    else if (when) t = at_time.at(tp) >= 0 ? at_time.at(tp) : hi;
    else t = (current >= 0 ? current : hi) + *shift;
    target[tp] = std::clamp(t, lo, hi);  // as Kafka does: never outside the log
  }
  if (execute) commit_offsets(ctx.client(), name, target);

  if (ctx.json()) {
    Json arr = Json::array();
    for (const auto& [tp, off] : target) {
      auto cit = committed.find(tp);
      Json j = Json::object();
      j.set("topic", tp.first).set("partition", tp.second)
          .set("current_offset", cit != committed.end() && cit->second >= 0 ? Json(cit->second) : Json())
          .set("new_offset", off);
      arr.push(std::move(j));
    }
    Json out = Json::object();
    out.set("group", name).set("executed", execute).set("offsets", std::move(arr));
    print_json(out);
    return;
  }
  Table table({"TOPIC", "PARTITION", "CURRENT-OFFSET", "NEW-OFFSET"});
  for (const auto& [tp, off] : target) {
    auto cit = committed.find(tp);
    table.add({tp.first, std::to_string(tp.second),
               cit != committed.end() && cit->second >= 0 ? std::to_string(cit->second) : "-", std::to_string(off)});
  }
  print_text(table.render() + (execute ? "\nOffsets committed." : "\nDry run: nothing committed (use --execute)."));
}

void remove(Context& ctx) {
  std::string name = ctx.args.positionals()[0];
  check_group_name(name);
  auto& conn = ctx.client().coordinator(name);
  proto::DeleteGroupsRequest req;
  req.groups_names = {name};
  auto resp = conn.call<proto::DeleteGroupsResponse>(req);
  if (resp.results.empty()) throw CommandError("deleting group '" + name + "': empty response");
  check_error(resp.results.front().error_code, "deleting group '" + name + "'");
  if (ctx.json()) {
    Json j = Json::object();
    j.set("group", name).set("result", "deleted");
    print_json(j);
  } else {
    print_text("Group '" + name + "' deleted.");
  }
}

}  // namespace

std::vector<Command> group_commands() {
  return {
      {"groups", "list", "List consumer groups on every broker.", {}, 0, {}, "", list},
      {"groups", "describe", "Show a group's members, assignments, committed offsets and lag.", {"NAME"}, 0, {}, "",
       describe},
      {"groups", "reset-offsets", "Move a group's committed offsets on a topic (the group must be Empty).", {"NAME"}, 0,
       {{"topic", "T", "the topic whose offsets move"},
        {"to-earliest", "", "to the log start"},
        {"to-latest", "", "to the log end"},
        {"to-offset", "N", "to offset N (clamped to the log)"},
        {"to-datetime", "ISO", "to the first offset at or after the time, e.g. 2024-05-01T12:00:00Z (no zone = UTC)"},
        {"shift-by", "N", "by N from the committed offset (negative moves back)"},
        {"dry-run", "", "only show the new offsets (the default)"},
        {"execute", "", "commit the new offsets"}},
       "", reset_offsets},
      {"groups", "delete", "Delete a group and its committed offsets (the group must be Empty).", {"NAME"}, 0, {}, "",
       remove},
  };
}

}  // namespace brokerctl
