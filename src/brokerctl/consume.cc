// consume TOPIC: ListOffsets (or a group's committed offsets) for the start, then a Fetch loop.
#include <cstdio>

#include "brokerctl/checks.h"
#include "brokerctl/commands.h"
#include "brokerctl/offsets.h"
#include "brokerd/storage/record_batch.h"

namespace brokerctl {
namespace {

namespace storage = brokerd::storage;

std::string text_of(std::span<const std::byte> s) { return std::string(reinterpret_cast<const char*>(s.data()), s.size()); }

struct Consumer {
  Consumer(Context& c, std::string t) : ctx(c), topic(std::move(t)) {}
  Context& ctx;
  std::string topic;
  std::map<int32_t, int64_t> position;
  std::map<int32_t, int64_t> end;  // stop here unless following
  std::map<int32_t, int32_t> leader;
  int64_t max = -1;
  int64_t printed = 0;
  bool follow = false;
  bool print_key = false;
  std::string separator = "\t";

  bool done() const { return max >= 0 && printed >= max; }
  bool active(int32_t p) const { return follow || position.at(p) < end.at(p); }

  void print(int32_t partition, const storage::Record& r) {
    std::optional<std::string> key, value;
    if (r.key) key = text_of(*r.key);
    if (r.value) value = text_of(*r.value);
    std::string line;
    if (ctx.json()) {
      Json j = Json::object();
      j.set("topic", topic).set("partition", partition).set("offset", r.offset).set("timestamp", r.timestamp)
          .set("key", key).set("value", value);
      line = j.dump();
    } else {
      if (print_key) line = key.value_or("null") + separator;
      line += value.value_or("null");
    }
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stdout);
    ++printed;
  }

  // Prints the records at or after the partition's position; returns when done.
  void take(int32_t partition, const proto::Records& records) {
    brokerd::Bytes bytes = records.to_bytes();
    std::span<const std::byte> rest(bytes);
    int64_t& pos = position[partition];
    while (rest.size() >= storage::batch_layout::header_size && !done()) {
      storage::RecordBatchView batch(rest);
      if (batch.batch_length() <= 0 || batch.size() > rest.size()) break;  // a partial batch at the end
      if (batch.magic() != 2) throw CommandError("unsupported record batch format (magic " + std::to_string(batch.magic()) + ")");
      if (!batch.is_control()) {
        storage::RecordReader reader(batch);
        storage::Record r;
        while (!done() && reader.next(r)) {
          if (r.offset < pos) continue;
          print(partition, r);
          pos = r.offset + 1;
        }
        if (reader.error() != proto::ErrorCode::none && !done()) {
          throw CommandError("cannot read records of " + topic + "-" + std::to_string(partition) + ": " +
                             std::string(proto::error_name(reader.error())));
        }
      }
      if (!done()) pos = std::max(pos, batch.next_offset());
      rest = rest.subspan(batch.size());
    }
  }

  void fetch_from(int32_t node, const std::vector<int32_t>& partitions) {
    proto::FetchRequest req;
    req.replica_id = -1;
    req.max_wait_ms = 500;
    req.min_bytes = 1;
    req.max_bytes = 16 << 20;
    req.session_epoch = -1;
    proto::FetchRequest::FetchTopic ft;
    ft.topic = topic;
    for (int32_t p : partitions) {
      proto::FetchRequest::FetchPartition fp;
      fp.partition = p;
      fp.fetch_offset = position[p];
      fp.partition_max_bytes = 1 << 20;
      ft.partitions.push_back(fp);
    }
    req.topics.push_back(ft);
    // Up to v12 topics are named; later versions identify them by id.
    auto resp = ctx.client().node(node).call<proto::FetchResponse>(req, int16_t(12));
    check_error(resp.error_code, "fetching from " + topic);
    for (const auto& t : resp.responses) {
      for (const auto& p : t.partitions) {
        check_error(p.error_code, "fetching " + topic + "-" + std::to_string(p.partition_index));
        take(p.partition_index, p.records);
        if (done()) return;
      }
    }
  }

  void run() {
    while (!done()) {
      std::map<int32_t, std::vector<int32_t>> by_leader;
      for (const auto& [p, pos] : position) {
        if (active(p)) by_leader[leader.at(p)].push_back(p);
      }
      if (by_leader.empty()) return;
      for (const auto& [node, parts] : by_leader) {
        fetch_from(node, parts);
        if (done()) return;
      }
    }
  }
};

}  // namespace

void consume(Context& ctx) {
  const auto& a = ctx.args;
  std::string topic = a.positionals()[0];
  check_topic_name(topic);
  auto only = a.get_int("partition", 0, INT32_MAX);
  auto max = a.get_int("max", 0, INT64_MAX);
  auto group = a.get("group");
  if (group) check_group_name(*group);
  auto sep = a.get("key-separator");

  Consumer c(ctx, topic);
  c.follow = a.flag("follow");
  c.print_key = a.flag("print-key");
  if (sep) c.separator = *sep;
  if (max) c.max = *max;
  auto t = ctx.client().topic(topic);
  for (const auto& p : t.partitions) {
    if (!only || p.partition_index == *only) c.leader[p.partition_index] = p.leader_id;
  }
  if (only && c.leader.empty()) {
    throw CommandError("topic '" + topic + "' has " + std::to_string(t.partitions.size()) + " partitions; there is no partition " +
                       std::to_string(*only));
  }
  std::vector<TopicPartition> tps;
  for (const auto& [p, l] : c.leader) tps.emplace_back(topic, p);

  std::map<TopicPartition, int64_t> committed;
  if (group) committed = fetch_committed(ctx.client(), *group, {topic});
  auto fallback = list_offsets(ctx.client(), tps, a.flag("from-beginning") ? kEarliest : kLatest);
  auto latest = list_offsets(ctx.client(), tps, kLatest);
  for (const auto& tp : tps) {
    auto it = committed.find(tp);
    c.position[tp.second] = it != committed.end() && it->second >= 0 ? it->second : fallback.at(tp);
    c.end[tp.second] = latest.at(tp);
  }
  c.run();
  std::fflush(stdout);
  if (group) {
    std::map<TopicPartition, int64_t> reached;
    for (const auto& [p, pos] : c.position) reached[{topic, p}] = pos;
    commit_offsets(ctx.client(), *group, reached);
  }
}

}  // namespace brokerctl
