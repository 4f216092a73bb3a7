// log-dirs describe, move: where each broker keeps its partitions (DescribeLogDirs), and
// moving a partition to another log dir of the same broker (AlterReplicaLogDirs).
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "brokerd/protocol/messages/alter_replica_log_dirs_request.h"
#include "brokerd/protocol/messages/alter_replica_log_dirs_response.h"
#include "brokerd/protocol/messages/describe_log_dirs_request.h"
#include "brokerd/protocol/messages/describe_log_dirs_response.h"

#include "brokerctl/commands.h"

namespace brokerctl {
namespace {

// One partition directory as a broker reports it.
struct Placement {
  int32_t broker = 0;
  std::string dir;
  std::string topic;
  int32_t partition = 0;
  int64_t size = 0;
  int64_t offset_lag = 0;
  bool future = false;  // a copy being made by a move
};

// The brokers named by --broker, else every broker of the cluster.
std::vector<int32_t> brokers_of(Context& ctx) {
  std::vector<int32_t> ids;
  for (const auto& b : ctx.args.all("broker")) {
    auto n = parse_int(b, 0, INT32_MAX);
    if (!n) throw UsageError("--broker takes a node id, not '" + b + "'");
    ids.push_back(static_cast<int32_t>(*n));
  }
  if (ids.empty()) {
    ctx.client().metadata(std::vector<std::string>{});
    ids = ctx.client().node_ids();
  }
  return ids;
}

std::vector<Placement> placements(Context& ctx, int32_t broker, const std::optional<std::string>& topic) {
  proto::DescribeLogDirsRequest req;
  if (topic) {
    auto meta = ctx.client().topic(*topic);
    proto::DescribeLogDirsRequest::DescribableLogDirTopic t;
    t.topic = *topic;
    for (const auto& p : meta.partitions) t.partitions.push_back(p.partition_index);
    req.topics = std::vector{t};
  } else {
    req.topics = std::nullopt;
  }
  auto resp = ctx.client().node(broker).call<proto::DescribeLogDirsResponse>(req);
  check_error(resp.error_code, fmt::format("describing the log dirs of broker {}", broker));
  std::vector<Placement> out;
  for (const auto& r : resp.results) {
    check_error(r.error_code, fmt::format("log dir {} of broker {}", r.log_dir, broker));
    for (const auto& t : r.topics)
      for (const auto& p : t.partitions)
        out.push_back({broker, r.log_dir, t.name, p.partition_index, p.partition_size, p.offset_lag, p.is_future_key});
  }
  return out;
}

void describe(Context& ctx) {
  const auto topic = ctx.args.get("topic");
  Json arr = Json::array();
  Table table({"BROKER", "LOG DIR", "PARTITION", "SIZE", "STATE"});
  for (int32_t broker : brokers_of(ctx)) {
    for (const auto& p : placements(ctx, broker, topic)) {
      const std::string state = p.future ? fmt::format("moving here ({} offsets behind)", p.offset_lag) : "";
      Json j = Json::object();
      j.set("broker", static_cast<int64_t>(p.broker)).set("log_dir", p.dir).set("topic", p.topic)
          .set("partition", static_cast<int64_t>(p.partition)).set("size", p.size).set("future", p.future)
          .set("offset_lag", p.offset_lag);
      arr.push(j);
      table.add({std::to_string(p.broker), p.dir, fmt::format("{}-{}", p.topic, p.partition), std::to_string(p.size), state});
    }
  }
  if (ctx.json()) print_json(arr);
  else print_text(table.empty() ? "No partitions.\n" : table.render());
}

void move(Context& ctx) {
  const auto topic = ctx.args.get("topic");
  const auto partition = ctx.args.get_int("partition", 0, INT32_MAX);
  const auto dir = ctx.args.get("dir");
  if (!topic || !partition || !dir) throw UsageError("--topic, --partition and --dir are required");
  const auto brokers = brokers_of(ctx);
  if (brokers.size() != 1) throw UsageError("name the broker whose log dirs to use with --broker N");
  const int32_t broker = brokers.front();
  proto::AlterReplicaLogDirsRequest req;
  auto& d = req.dirs.emplace_back();
  d.path = *dir;
  auto& t = d.topics.emplace_back();
  t.name = *topic;
  t.partitions.push_back(static_cast<int32_t>(*partition));
  auto resp = ctx.client().node(broker).call<proto::AlterReplicaLogDirsResponse>(req);
  for (const auto& r : resp.results)
    for (const auto& p : r.partitions)
      check_error(p.error_code, fmt::format("moving {}-{} on broker {}", r.topic_name, p.partition_index, broker));
  if (ctx.args.flag("no-wait")) {
    if (!ctx.json()) print_text(fmt::format("Moving {}-{} to {} on broker {}.", *topic, *partition, *dir, broker));
    return;
  }
  // Until the broker reports the partition in the target dir and no copy remains.
  const int64_t wait_ms = ctx.args.get_int("wait-ms", 0, INT64_MAX).value_or(600000);
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    bool in_place = false;
    bool copying = false;
    for (const auto& p : placements(ctx, broker, *topic)) {
      if (p.partition != *partition) continue;
      copying = copying || p.future;
      in_place = in_place || (!p.future && p.dir == *dir);
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (in_place && !copying) {
      if (ctx.json()) {
        Json j = Json::object();
        j.set("broker", static_cast<int64_t>(broker)).set("topic", *topic).set("partition", *partition)
            .set("log_dir", *dir).set("milliseconds", static_cast<int64_t>(elapsed * 1000));
        print_json(j);
      } else {
        print_text(fmt::format("{}-{} is in {} on broker {} after {:.1f} s.", *topic, *partition, *dir, broker, elapsed));
      }
      return;
    }
    if (!copying) throw CommandError(fmt::format("{}-{} is not moving to {} (see the broker's log)", *topic, *partition, *dir));
    if (elapsed * 1000 >= static_cast<double>(wait_ms))
      throw CommandError(fmt::format("{}-{} still moving after {:.0f} s (it goes on)", *topic, *partition, elapsed));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

}  // namespace

std::vector<Command> log_dir_commands() {
  const OptionSpec broker{"broker", "N", "a broker's node id", true};
  return {{"log-dirs", "describe",
           "List each broker's log dirs and the partitions in them, with any move in progress.",
           {},
           0,
           {broker, {"topic", "NAME", "only this topic's partitions"}},
           "",
           describe},
          {"log-dirs", "move",
           "Move a partition to another log dir of the same broker while it keeps serving.",
           {},
           0,
           {broker,
            {"topic", "NAME", "the topic"},
            {"partition", "N", "the partition"},
            {"dir", "PATH", "the target log dir, as 'log-dirs describe' shows it"},
            {"no-wait", "", "return once the broker accepted the move"},
            {"wait-ms", "MS", "how long to follow the move (default 600000)"}},
           "The broker copies the partition in rounds while it serves, then swaps the copy in with a pause of the "
           "partition bounded by what arrives during the last round.",
           move}};
}

}  // namespace brokerctl
