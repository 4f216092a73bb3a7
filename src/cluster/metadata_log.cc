#include "cluster/metadata_log.h"

#include <unistd.h>

#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/protocol/messages/config_record.h"
#include "brokerd/protocol/messages/partition_record.h"
#include "brokerd/protocol/messages/producer_ids_record.h"
#include "brokerd/protocol/messages/remove_topic_record.h"
#include "brokerd/protocol/messages/topic_record.h"
#include "brokerd/protocol/wire.h"
#include "brokerd/storage/batch_builder.h"

namespace brokerd::cluster {
namespace {

constexpr uint32_t kFrameVersion = 1;
constexpr uint32_t kTopicRecord = 2, kPartitionRecord = 3, kConfigRecord = 4, kRemoveTopicRecord = 9;
constexpr uint32_t kProducerIdsRecord = 15;
constexpr int8_t kTopicResource = 2;

template <typename Msg>
Bytes frame(uint32_t type, const Msg& msg) {
  protocol::Writer w;
  w.uvarint(kFrameVersion);
  w.uvarint(type);
  w.uvarint(0);
  msg.encode(w, 0);
  return std::move(w).finish_bytes();
}

std::shared_ptr<TopicMetadata> copy_topic(const MetadataImage& image, const protocol::Uuid& id) {
  const TopicMetadata* t = image.topic(id);
  return t ? std::make_shared<TopicMetadata>(*t) : nullptr;
}

}  // namespace

Bytes topic_record(const TopicMetadata& t) {
  protocol::TopicRecord r;
  r.name = t.name;
  r.topic_id = t.id;
  return frame(kTopicRecord, r);
}

Bytes partition_record(const TopicMetadata& t, int32_t partition, int32_t node_id) {
  protocol::PartitionRecord r;
  r.partition_id = partition;
  r.topic_id = t.id;
  r.replicas = {node_id};
  r.isr = {node_id};
  r.leader = node_id;
  r.leader_epoch = 0;
  r.partition_epoch = 0;
  return frame(kPartitionRecord, r);
}

Bytes config_record(const std::string& topic, const std::string& name, const std::optional<std::string>& value) {
  protocol::ConfigRecord r;
  r.resource_type = kTopicResource;
  r.resource_name = topic;
  r.name = name;
  r.value = value;
  return frame(kConfigRecord, r);
}

Bytes remove_topic_record(const protocol::Uuid& id) {
  protocol::RemoveTopicRecord r;
  r.topic_id = id;
  return frame(kRemoveTopicRecord, r);
}

Bytes producer_ids_record(int32_t broker_id, int64_t broker_epoch, int64_t next_producer_id) {
  protocol::ProducerIdsRecord r;
  r.broker_id = broker_id;
  r.broker_epoch = broker_epoch;
  r.next_producer_id = next_producer_id;
  return frame(kProducerIdsRecord, r);
}

void apply_metadata_record(std::span<const std::byte> value, MetadataImage& image) {
  protocol::Reader rd(value);
  rd.uvarint();  // frame version
  uint32_t type = rd.uvarint();
  auto version = static_cast<int16_t>(rd.uvarint());
  switch (type) {
    case kTopicRecord: {
      protocol::TopicRecord r;
      r.decode(rd, version);
      auto t = std::make_shared<TopicMetadata>();
      t->name = r.name;
      t->id = r.topic_id;
      t->internal = is_internal_topic(r.name);
      image.put_topic(std::move(t));
      break;
    }
    case kPartitionRecord: {
      protocol::PartitionRecord r;
      r.decode(rd, version);
      if (auto t = copy_topic(image, r.topic_id)) {
        t->partitions = std::max(t->partitions, r.partition_id + 1);
        t->replication_factor = static_cast<int32_t>(r.replicas.size());
        image.put_topic(std::move(t));
      }
      break;
    }
    case kConfigRecord: {
      protocol::ConfigRecord r;
      r.decode(rd, version);
      if (r.resource_type != kTopicResource) break;
      const TopicMetadata* existing = image.topic(r.resource_name);
      if (!existing) break;
      auto t = std::make_shared<TopicMetadata>(*existing);
      if (r.value) {
        t->configs[r.name] = *r.value;
      } else {
        t->configs.erase(r.name);
      }
      image.put_topic(std::move(t));
      break;
    }
    case kRemoveTopicRecord: {
      protocol::RemoveTopicRecord r;
      r.decode(rd, version);
      if (const TopicMetadata* t = image.topic(r.topic_id)) image.remove_topic(t->name);
      break;
    }
    case kProducerIdsRecord: {
      protocol::ProducerIdsRecord r;
      r.decode(rd, version);
      image.next_producer_id = std::max(image.next_producer_id, r.next_producer_id);
      break;
    }
    default:
      break;
  }
}

MetadataLog::MetadataLog(std::filesystem::path dir) {
  storage::LogConfig cfg;
  cfg.retention_ms = -1;  // the metadata log is never trimmed by time or size
  cfg.segment_bytes = 64 << 20;
  // Every append is fsynced before it is acknowledged, so recovery need only cut a torn tail.
  log_ = storage::Log::open(std::move(dir), cfg, false);
}

MetadataLog::~MetadataLog() = default;

void MetadataLog::replay(MetadataImage& image) {
  int64_t offset = log_->log_start_offset();
  const int64_t end = log_->log_end_offset();
  while (offset < end) {
    auto rr = log_->read(offset, 1 << 20, true, end);
    if (rr.error != protocol::ErrorCode::none) throw std::runtime_error("metadata log unreadable");
    Bytes bytes = rr.records.to_bytes();
    if (bytes.empty()) break;
    std::span<const std::byte> rest(bytes);
    while (rest.size() >= storage::batch_layout::header_size) {
      storage::RecordBatchView batch(rest);
      if (batch.size() > rest.size()) break;
      storage::RecordReader reader(batch);
      storage::Record rec;
      while (reader.next(rec)) {
        if (rec.offset >= offset && rec.value) apply_metadata_record(*rec.value, image);
        image.offset = rec.offset;
      }
      offset = batch.next_offset();
      rest = rest.subspan(batch.size());
    }
  }
}

int64_t MetadataLog::append(const std::vector<Bytes>& record_values) {
  storage::BatchBuilder builder;
  int64_t ts = wall_clock_ms();
  for (const auto& v : record_values) builder.add(ts, std::nullopt, std::span<const std::byte>(v));
  Bytes batch = builder.build();
  auto result = log_->append(batch, 0, ts, storage::AppendOrigin::internal);
  if (result.error != protocol::ErrorCode::none) {
    throw std::runtime_error("metadata log append failed: " + result.message);
  }
  if (log_->flush() != protocol::ErrorCode::none) throw std::runtime_error("metadata log fsync failed");
  return result.last_offset;
}

void MetadataLog::close() {
  if (log_) log_->close();
}

}  // namespace brokerd::cluster
