// Encode/decode cost of the generated codecs on typical large messages.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "brokerd/protocol/messages/metadata_response.h"
#include "brokerd/protocol/messages/produce_request.h"

namespace {

using namespace brokerd;
using namespace brokerd::protocol;

constexpr int16_t kProduceVersion = 9;
constexpr int16_t kMetadataVersion = 12;

ProduceRequest make_produce() {
  ProduceRequest req;
  req.acks = -1;
  req.timeout_ms = 30000;
  auto& topic = req.topic_data.emplace_back();
  topic.name = "bench-topic";
  for (int p = 0; p < 6; ++p) {
    auto& part = topic.partition_data.emplace_back();
    part.index = p;
    Bytes blob(16 * 1024, std::byte{static_cast<unsigned char>(p)});
    part.records = Records::of(SharedBytes::copy_of(blob));
  }
  return req;
}

MetadataResponse make_metadata() {
  MetadataResponse resp;
  for (int b = 0; b < 3; ++b) {
    auto& broker = resp.brokers.emplace_back();
    broker.node_id = b;
    broker.host = "broker-" + std::to_string(b) + ".example.internal";
    broker.port = 9092;
    broker.rack = "zone-" + std::to_string(b);
  }
  resp.cluster_id = "cluster-id";
  resp.controller_id = 0;
  for (int t = 0; t < 100; ++t) {
    auto& topic = resp.topics.emplace_back();
    topic.name = "topic-" + std::to_string(t);
    topic.topic_id = Uuid::random();
    for (int p = 0; p < 6; ++p) {
      auto& part = topic.partitions.emplace_back();
      part.partition_index = p;
      part.leader_id = p % 3;
      part.leader_epoch = 5;
      part.replica_nodes = {0, 1, 2};
      part.isr_nodes = {0, 1, 2};
    }
  }
  return resp;
}

template <typename Msg>
Bytes encode_flat(const Msg& m, int16_t version) {
  Writer w;
  m.encode(w, version);
  return std::move(w).finish_bytes();
}

void BM_ProduceEncode(benchmark::State& state) {
  auto req = make_produce();
  for (auto _ : state) {
    Writer w;
    req.encode(w, kProduceVersion);
    auto chunks = std::move(w).finish();  // records stay borrowed: no copy of the 96 KB
    benchmark::DoNotOptimize(chunks);
  }
}
BENCHMARK(BM_ProduceEncode);

void BM_ProduceDecode(benchmark::State& state) {
  auto frame = std::make_shared<Bytes>(encode_flat(make_produce(), kProduceVersion));
  for (auto _ : state) {
    Reader r(*frame, frame);
    ProduceRequest req;
    req.decode(r, kProduceVersion);
    benchmark::DoNotOptimize(req);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * frame->size()));
}
BENCHMARK(BM_ProduceDecode);

void BM_MetadataEncode(benchmark::State& state) {
  auto resp = make_metadata();
  size_t size = 0;
  for (auto _ : state) {
    Writer w;
    resp.encode(w, kMetadataVersion);
    size = w.size();
    auto chunks = std::move(w).finish();
    benchmark::DoNotOptimize(chunks);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * size));
}
BENCHMARK(BM_MetadataEncode);

void BM_MetadataDecode(benchmark::State& state) {
  auto bytes = encode_flat(make_metadata(), kMetadataVersion);
  for (auto _ : state) {
    Reader r(bytes);
    MetadataResponse resp;
    resp.decode(r, kMetadataVersion);
    benchmark::DoNotOptimize(resp);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes.size()));
}
BENCHMARK(BM_MetadataDecode);

}  // namespace
