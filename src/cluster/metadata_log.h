#pragma once
// The metadata log: KRaft metadata records (TopicRecord, PartitionRecord, ConfigRecord,
// RemoveTopicRecord) in record batches on a segment log of its own, each change one batch.
// Replaying it rebuilds the MetadataImage. The controller quorum will replicate this log.
#include <filesystem>
#include <memory>
#include <vector>

#include "brokerd/cluster/metadata_image.h"
#include "brokerd/common/bytes.h"
#include "brokerd/storage/log.h"

namespace brokerd::cluster {

// One metadata record value, framed as KRaft frames them.
struct MetadataRecordBytes {
  Bytes value;
};

class MetadataLog {
 public:
  explicit MetadataLog(std::filesystem::path dir);
  ~MetadataLog();

  // Applies every record in the log to `image` (which starts empty).
  void replay(MetadataImage& image);
  // Appends one change atomically (one batch) and fsyncs it; returns the last offset.
  int64_t append(const std::vector<Bytes>& record_values);
  void close();

 private:
  std::unique_ptr<storage::Log> log_;
};

// Encoders of the records a topic change writes.
Bytes topic_record(const TopicMetadata& t);
Bytes partition_record(const TopicMetadata& t, int32_t partition, int32_t node_id);
Bytes config_record(const std::string& topic, const std::string& name, const std::optional<std::string>& value);
Bytes remove_topic_record(const protocol::Uuid& id);
Bytes producer_ids_record(int32_t broker_id, int64_t broker_epoch, int64_t next_producer_id);

// Applies one record value to `image`. Unknown record types are skipped, so a newer log
// can be read by an older node as far as it understands it.
void apply_metadata_record(std::span<const std::byte> value, MetadataImage& image);

}  // namespace brokerd::cluster
