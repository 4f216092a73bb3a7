// transactions list | describe | describe-producers | abort | find-hanging, in the shape of
// Kafka's kafka-transactions.sh.
#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <set>

#include "brokerctl/checks.h"
#include "brokerctl/commands.h"

namespace brokerctl {
namespace {

int64_t now_ms() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

struct Listed {
  std::string id;
  int32_t coordinator = -1;
  int64_t producer_id = -1;
  std::string state;
};

// ListTransactions on every broker: each lists the ids it coordinates.
std::vector<Listed> list_all(Context& ctx, const std::vector<std::string>& states, const std::vector<int64_t>& pids,
                             int64_t min_duration_ms, const std::optional<std::string>& pattern) {
  auto& client = ctx.client();
  client.metadata(std::vector<std::string>{});
  std::vector<Listed> out;
  for (int32_t node : client.node_ids()) {
    proto::ListTransactionsRequest req;
    req.state_filters = states;
    req.producer_id_filters = pids;
    req.duration_filter = min_duration_ms;
    req.transactional_id_pattern = pattern;
    auto resp = client.node(node).call<proto::ListTransactionsResponse>(req);
    check_error(resp.error_code, "listing transactions on broker " + std::to_string(node));
    for (const auto& s : resp.transaction_states) out.push_back({s.transactional_id, node, s.producer_id, s.transaction_state});
  }
  std::sort(out.begin(), out.end(), [](const Listed& a, const Listed& b) { return a.id < b.id; });
  return out;
}

void list(Context& ctx) {
  std::vector<int64_t> pids;
  for (const auto& p : ctx.args.all("producer-id")) {
    char* end = nullptr;
    const long long v = std::strtoll(p.c_str(), &end, 10);
    if (p.empty() || *end != '\0' || v < 0) throw UsageError("--producer-id: '" + p + "' is not a producer id");
    pids.push_back(v);
  }
  const int64_t duration = ctx.args.get_int("duration-ms", 0, INT64_MAX).value_or(-1);
  auto listed = list_all(ctx, ctx.args.all("state"), pids, duration, ctx.args.get("pattern"));
  if (ctx.json()) {
    Json arr = Json::array();
    for (const auto& l : listed) {
      Json j = Json::object();
      j.set("transactional_id", l.id).set("coordinator", l.coordinator).set("producer_id", l.producer_id)
          .set("state", l.state);
      arr.push(std::move(j));
    }
    print_json(arr);
    return;
  }
  Table table({"TRANSACTIONAL-ID", "COORDINATOR", "PRODUCER-ID", "STATE"});
  for (const auto& l : listed)
    table.add({l.id, std::to_string(l.coordinator), std::to_string(l.producer_id), l.state});
  print_text(table.render());
}

proto::DescribeTransactionsResponse::TransactionState describe_one(Context& ctx, const std::string& id) {
  auto& conn = ctx.client().coordinator(id, 1);
  proto::DescribeTransactionsRequest req;
  req.transactional_ids = {id};
  auto resp = conn.call<proto::DescribeTransactionsResponse>(req);
  if (resp.transaction_states.empty()) throw CommandError("describing transactional id '" + id + "': empty response");
  auto s = resp.transaction_states.front();
  check_error(s.error_code, "describing transactional id '" + id + "'");
  return s;
}

void describe(Context& ctx) {
  const std::string id = ctx.args.positionals()[0];
  auto s = describe_one(ctx, id);
  const int64_t duration = s.transaction_start_time_ms >= 0 ? now_ms() - s.transaction_start_time_ms : -1;
  if (ctx.json()) {
    Json j = Json::object();
    Json parts = Json::array();
    for (const auto& t : s.topics)
      for (int32_t p : t.partitions) {
        Json tp = Json::object();
        tp.set("topic", t.topic).set("partition", p);
        parts.push(std::move(tp));
      }
    j.set("transactional_id", id).set("state", s.transaction_state).set("producer_id", s.producer_id)
        .set("producer_epoch", static_cast<int>(s.producer_epoch)).set("timeout_ms", s.transaction_timeout_ms)
        .set("start_time_ms", s.transaction_start_time_ms).set("duration_ms", duration).set("partitions", std::move(parts));
    print_json(j);
    return;
  }
  std::vector<std::string> parts;
  for (const auto& t : s.topics)
    for (int32_t p : t.partitions) parts.push_back(t.topic + "-" + std::to_string(p));
  Table table({"TRANSACTIONAL-ID", "STATE", "PRODUCER-ID", "EPOCH", "TIMEOUT-MS", "DURATION-MS", "PARTITIONS"});
  std::string joined;
  for (const auto& p : parts) joined += (joined.empty() ? "" : ",") + p;
  table.add({id, s.transaction_state, std::to_string(s.producer_id), std::to_string(s.producer_epoch),
             std::to_string(s.transaction_timeout_ms), duration >= 0 ? std::to_string(duration) : "-",
             joined.empty() ? "-" : joined});
  print_text(table.render());
}

// The leader of topic-partition, and its connection.
Connection& leader_of(Context& ctx, const std::string& topic, int32_t partition) {
  auto t = ctx.client().topic(topic);
  for (const auto& p : t.partitions)
    if (p.partition_index == partition) {
      if (p.leader_id < 0) throw CommandError(topic + "-" + std::to_string(partition) + " has no leader");
      return ctx.client().node(p.leader_id);
    }
  throw CommandError(topic + " has no partition " + std::to_string(partition));
}

using ProducerState = proto::DescribeProducersResponse::ProducerState;

std::vector<ProducerState> producers_of(Context& ctx, const std::string& topic, int32_t partition) {
  auto& conn = leader_of(ctx, topic, partition);
  proto::DescribeProducersRequest req;
  auto& t = req.topics.emplace_back();
  t.name = topic;
  t.partition_indexes = {partition};
  auto resp = conn.call<proto::DescribeProducersResponse>(req);
  const std::string what = "describing the producers of " + topic + "-" + std::to_string(partition);
  if (resp.topics.empty() || resp.topics[0].partitions.empty()) throw CommandError(what + ": empty response");
  const auto& p = resp.topics[0].partitions[0];
  check_error(p.error_code, what, p.error_message);
  return p.active_producers;
}

std::pair<std::string, int32_t> topic_partition(Context& ctx) {
  auto topic = ctx.args.get("topic");
  if (!topic) throw UsageError("--topic is required");
  auto partition = ctx.args.get_int("partition", 0, INT32_MAX);
  if (!partition) throw UsageError("--partition is required");
  return {*topic, static_cast<int32_t>(*partition)};
}

void describe_producers(Context& ctx) {
  auto [topic, partition] = topic_partition(ctx);
  auto producers = producers_of(ctx, topic, partition);
  if (ctx.json()) {
    Json arr = Json::array();
    for (const auto& p : producers) {
      Json j = Json::object();
      j.set("producer_id", p.producer_id).set("producer_epoch", p.producer_epoch).set("last_sequence", p.last_sequence)
          .set("last_timestamp", p.last_timestamp).set("coordinator_epoch", p.coordinator_epoch)
          .set("current_transaction_start_offset", p.current_txn_start_offset);
      arr.push(std::move(j));
    }
    print_json(arr);
    return;
  }
  Table table({"PRODUCER-ID", "EPOCH", "LAST-SEQUENCE", "LAST-TIMESTAMP", "COORDINATOR-EPOCH", "TXN-START-OFFSET"});
  for (const auto& p : producers)
    table.add({std::to_string(p.producer_id), std::to_string(p.producer_epoch), std::to_string(p.last_sequence),
               std::to_string(p.last_timestamp), std::to_string(p.coordinator_epoch),
               p.current_txn_start_offset >= 0 ? std::to_string(p.current_txn_start_offset) : "-"});
  print_text(table.render());
}

// Writes an ABORT marker for the producer whose open transaction starts at the offset, as
// Kafka's tool does: with its epoch and the coordinator epoch the partition knows.
void abort_txn(Context& ctx) {
  auto [topic, partition] = topic_partition(ctx);
  auto start = ctx.args.get_int("start-offset", 0, INT64_MAX);
  if (!start) throw UsageError("--start-offset is required");
  const ProducerState* found = nullptr;
  auto producers = producers_of(ctx, topic, partition);
  for (const auto& p : producers)
    if (p.current_txn_start_offset == *start) found = &p;
  const std::string where = topic + "-" + std::to_string(partition);
  if (!found)
    throw CommandError("no open transaction starts at offset " + std::to_string(*start) + " of " + where +
                       " (see: transactions describe-producers)");
  proto::WriteTxnMarkersRequest req;
  auto& m = req.markers.emplace_back();
  m.producer_id = found->producer_id;
  m.producer_epoch = static_cast<int16_t>(found->producer_epoch);
  m.transaction_result = false;
  m.coordinator_epoch = std::max(found->coordinator_epoch, 0);
  auto& t = m.topics.emplace_back();
  t.name = topic;
  t.partition_indexes = {partition};
  auto resp = leader_of(ctx, topic, partition).call<proto::WriteTxnMarkersResponse>(req);
  if (resp.markers.empty() || resp.markers[0].topics.empty() || resp.markers[0].topics[0].partitions.empty())
    throw CommandError("aborting the transaction on " + where + ": empty response");
  check_error(resp.markers[0].topics[0].partitions[0].error_code, "aborting the transaction on " + where);
  if (ctx.json()) {
    Json j = Json::object();
    j.set("topic", topic).set("partition", partition).set("producer_id", found->producer_id)
        .set("start_offset", *start).set("aborted", true);
    print_json(j);
    return;
  }
  print_text("aborted the transaction of producer " + std::to_string(found->producer_id) + " starting at offset " +
             std::to_string(*start) + " of " + where);
}

// Open transactions on the broker's partitions older than the longest transaction timeout
// whose coordinator does not know them as ongoing with that partition (Kafka's definition).
void find_hanging(Context& ctx) {
  auto& client = ctx.client();
  auto md = client.metadata(std::nullopt);
  const auto broker = ctx.args.get_int("broker-id", 0, INT32_MAX);
  const int64_t max_timeout_ms = ctx.args.get_int("max-transaction-timeout", 1, INT32_MAX).value_or(15) * 60'000;
  struct Open {
    std::string topic;
    int32_t partition;
    ProducerState producer;
  };
  std::vector<Open> open;
  const int64_t now = now_ms();
  for (const auto& t : md.topics) {
    for (const auto& p : t.partitions) {
      if (p.leader_id < 0 || (broker && p.leader_id != *broker)) continue;
      for (const auto& s : producers_of(ctx, t.name.value_or(""), p.partition_index))
        if (s.current_txn_start_offset >= 0 && now - s.last_timestamp > max_timeout_ms)
          open.push_back({t.name.value_or(""), p.partition_index, s});
    }
  }
  std::vector<Open> hanging;
  if (!open.empty()) {
    std::vector<int64_t> pids;
    for (const auto& o : open) pids.push_back(o.producer.producer_id);
    auto ongoing = list_all(ctx, {"Ongoing", "PrepareCommit", "PrepareAbort"}, pids, -1, std::nullopt);
    for (const auto& o : open) {
      bool known = false;
      for (const auto& l : ongoing) {
        if (l.producer_id != o.producer.producer_id) continue;
        auto s = describe_one(ctx, l.id);
        for (const auto& t : s.topics)
          if (t.topic == o.topic && std::count(t.partitions.begin(), t.partitions.end(), o.partition))
            known = true;
      }
      if (!known) hanging.push_back(o);
    }
  }
  if (ctx.json()) {
    Json arr = Json::array();
    for (const auto& h : hanging) {
      Json j = Json::object();
      j.set("topic", h.topic).set("partition", h.partition).set("producer_id", h.producer.producer_id)
          .set("producer_epoch", h.producer.producer_epoch).set("coordinator_epoch", h.producer.coordinator_epoch)
          .set("start_offset", h.producer.current_txn_start_offset)
          .set("last_timestamp", h.producer.last_timestamp);
      arr.push(std::move(j));
    }
    print_json(arr);
    return;
  }
  Table table({"TOPIC", "PARTITION", "PRODUCER-ID", "EPOCH", "COORDINATOR-EPOCH", "START-OFFSET", "LAST-TIMESTAMP"});
  for (const auto& h : hanging)
    table.add({h.topic, std::to_string(h.partition), std::to_string(h.producer.producer_id),
               std::to_string(h.producer.producer_epoch), std::to_string(h.producer.coordinator_epoch),
               std::to_string(h.producer.current_txn_start_offset), std::to_string(h.producer.last_timestamp)});
  print_text(table.render());
}

}  // namespace

std::vector<Command> transaction_commands() {
  return {
      {"transactions", "list", "List the transactional ids every coordinator holds.", {}, 0,
       {{"state", "STATE", "only ids in this state (Empty, Ongoing, PrepareCommit, ...)", true},
        {"producer-id", "ID", "only this producer id", true},
        {"duration-ms", "MS", "only transactions open at least this long"},
        {"pattern", "REGEX", "only ids matching this regular expression"}},
       "", list},
      {"transactions", "describe", "Show a transactional id's state, producer, timeout and partitions.", {"ID"}, 0, {},
       "", describe},
      {"transactions", "describe-producers", "Show the producers a partition tracks, with their open transactions.", {},
       0, {{"topic", "T", "the topic"}, {"partition", "P", "the partition"}}, "", describe_producers},
      {"transactions", "abort", "Abort the open transaction that starts at an offset of a partition.", {}, 0,
       {{"topic", "T", "the topic"},
        {"partition", "P", "the partition"},
        {"start-offset", "N", "the first offset of the transaction (transactions describe-producers shows it)"}},
       "Writes an ABORT marker on the partition's leader (CLUSTER_ACTION). For a transaction its coordinator no\n"
       "longer knows (find-hanging lists them); one it knows is better ended by its producer or its timeout.",
       abort_txn},
      {"transactions", "find-hanging",
       "List open transactions older than the longest transaction timeout that their coordinator does not know.", {}, 0,
       {{"broker-id", "N", "only the partitions this broker leads"},
        {"max-transaction-timeout", "MINUTES", "transaction.max.timeout.ms in minutes (default 15)"}},
       "", find_hanging},
  };
}

}  // namespace brokerctl
