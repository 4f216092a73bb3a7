// produce TOPIC: lines from stdin become records, batched per partition, sent with acks=all.
#include <chrono>
#include <iostream>

#include "brokerctl/checks.h"
#include "brokerctl/commands.h"
#include "brokerctl/offsets.h"
#include "brokerd/common/clock.h"
#include "brokerd/storage/batch_builder.h"

namespace brokerctl {
namespace {

// Kafka's murmur2 (the Java client's default partitioner), seed 0x9747b28c.
int32_t murmur2(std::string_view data) {
  const uint32_t m = 0x5bd1e995;
  const int r = 24;
  uint32_t length = static_cast<uint32_t>(data.size());
  uint32_t h = 0x9747b28c ^ length;
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  uint32_t quads = length / 4;
  for (uint32_t i = 0; i < quads; ++i) {
    uint32_t k = uint32_t(p[4 * i]) | (uint32_t(p[4 * i + 1]) << 8) | (uint32_t(p[4 * i + 2]) << 16) |
                 (uint32_t(p[4 * i + 3]) << 24);
    k *= m;
    k ^= k >> r;
    k *= m;
    h *= m;
    h ^= k;
  }
  const unsigned char* tail = p + 4 * quads;
  switch (length % 4) {
    case 3: h ^= uint32_t(tail[2]) << 16; [[fallthrough]];
    case 2: h ^= uint32_t(tail[1]) << 8; [[fallthrough]];
    case 1: h ^= uint32_t(tail[0]); h *= m;
  }
  h ^= h >> 13;
  h *= m;
  h ^= h >> 15;
  return static_cast<int32_t>(h);
}

struct Line {
  std::optional<std::string> key;
  std::string value;
};

constexpr size_t kBatchBytes = 512 * 1024;

struct Producer {
  Producer(Context& c, std::string t) : ctx(c), topic(std::move(t)) {}
  Context& ctx;
  std::string topic;
  std::map<int32_t, int32_t> leaders;
  int64_t sent = 0;
  std::map<int32_t, std::pair<int64_t, int64_t>> ranges;  // partition -> first, last offset

  void send(int32_t partition, const brokerd::storage::BatchBuilder& batch) {
    proto::ProduceRequest req;
    req.acks = -1;
    req.timeout_ms = ctx.timeout_ms;
    proto::ProduceRequest::TopicProduceData td;
    td.name = topic;
    proto::ProduceRequest::PartitionProduceData pd;
    pd.index = partition;
    pd.records = proto::Records::of(brokerd::SharedBytes::copy_of(batch.build()));
    td.partition_data.push_back(std::move(pd));
    req.topic_data.push_back(std::move(td));
    // v13 names topics by id; brokerctl names them.
    auto resp = ctx.client().node(leaders.at(partition)).call<proto::ProduceResponse>(req, int16_t(12));
    for (const auto& t : resp.responses) {
      for (const auto& p : t.partition_responses) {
        check_error(p.error_code, "producing to " + topic + "-" + std::to_string(p.index), p.error_message);
        auto [it, fresh] = ranges.try_emplace(p.index, p.base_offset, p.base_offset + batch.count() - 1);
        if (!fresh) it->second.second = p.base_offset + batch.count() - 1;
      }
    }
    sent += batch.count();
  }
};

void produce(Context& ctx) {
  const auto& a = ctx.args;
  std::string topic = a.positionals()[0];
  check_topic_name(topic);
  auto fixed_partition = a.get_int("partition", 0, INT32_MAX);
  auto sep = a.get("key-separator");
  if (sep && sep->empty()) throw UsageError("--key-separator must not be empty");

  auto t = ctx.client().topic(topic);
  Producer producer(ctx, topic);
  for (const auto& p : t.partitions) producer.leaders[p.partition_index] = p.leader_id;
  int32_t count = static_cast<int32_t>(producer.leaders.size());
  if (count == 0) throw CommandError("topic '" + topic + "' has no partitions");
  if (fixed_partition && *fixed_partition >= count) {
    throw CommandError("topic '" + topic + "' has " + std::to_string(count) + " partitions; there is no partition " +
                       std::to_string(*fixed_partition));
  }
  for (const auto& [p, leader] : producer.leaders) {
    if (leader < 0) throw CommandError("partition " + topic + "-" + std::to_string(p) + ": LEADER_NOT_AVAILABLE");
  }

  std::map<int32_t, brokerd::storage::BatchBuilder> batches;
  int32_t round_robin = 0;
  std::string text;
  int64_t line_no = 0;
  auto flush = [&](int32_t p) {
    auto it = batches.find(p);
    if (it == batches.end() || it->second.empty()) return;
    producer.send(p, it->second);
    batches.erase(it);
  };
  while (std::getline(std::cin, text)) {
    ++line_no;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    Line line;
    if (sep) {
      auto pos = text.find(*sep);
      if (pos == std::string::npos) {
        throw CommandError("line " + std::to_string(line_no) + " has no key separator '" + *sep + "'");
      }
      line.key = text.substr(0, pos);
      line.value = text.substr(pos + sep->size());
    } else {
      line.value = text;
    }
    int32_t partition;
    if (fixed_partition) partition = static_cast<int32_t>(*fixed_partition);
    else if (line.key) partition = (murmur2(*line.key) & 0x7fffffff) % count;
    else partition = round_robin++ % count;
    int64_t now = brokerd::wall_clock_ms();
    auto& b = batches[partition];
    std::optional<std::span<const std::byte>> key;
    if (line.key) key = brokerd::storage::as_bytes(*line.key);
    b.add(now, key, brokerd::storage::as_bytes(line.value));
    if (b.estimated_size() >= kBatchBytes) flush(partition);
  }
  while (!batches.empty()) flush(batches.begin()->first);

  if (ctx.json()) {
    Json parts = Json::array();
    for (const auto& [p, r] : producer.ranges) {
      Json j = Json::object();
      j.set("partition", p).set("first_offset", r.first).set("last_offset", r.second);
      parts.push(std::move(j));
    }
    Json out = Json::object();
    out.set("topic", topic).set("records", producer.sent).set("partitions", std::move(parts));
    print_json(out);
  } else {
    print_text("Produced " + std::to_string(producer.sent) + " records to '" + topic + "'.");
  }
}

}  // namespace

void consume(Context& ctx);

std::vector<Command> produce_consume_commands() {
  return {
      {"", "produce", "Send lines from stdin as records (acks=all).", {"TOPIC"}, 0,
       {{"key-separator", "SEP", "split each line at the first SEP into key and value"},
        {"partition", "N", "send every record to partition N (default: murmur2 of the key, round-robin without key)"}},
       "Records are batched per partition; the command ends when stdin does.", produce},
      {"", "consume", "Print records of a topic.", {"TOPIC"}, 0,
       {{"from-beginning", "", "start at the earliest offset when there is no committed one (default: the end)"},
        {"group", "G", "start at G's committed offsets and commit the positions reached"},
        {"max", "N", "stop after N records"},
        {"partition", "N", "read only partition N"},
        {"follow", "", "keep waiting for new records instead of stopping at the end of the log"},
        {"print-key", "", "print the key, then the separator, then the value"},
        {"key-separator", "SEP", "separator for --print-key (default a tab)"}},
       "Without --follow, stops at the end of the log (as it was when reading it) or after --max records.\n"
       "With --output json, prints one JSON object per record (JSON Lines).",
       consume},
  };
}

}  // namespace brokerctl
