#pragma once
// Mirror links on one node (the destination side; metadata/mirror_link.h). Two duties:
//  - on the active controller, every mirror.metadata.refresh.interval.ms, each active link's
//    source topics become mirror topics here (created, grown, configs kept in step), and
//    every mirror.offsets.sync.interval.ms its groups' committed offsets are copied
//    (mirror/offset_sync.h);
//  - on every broker, the mirror partitions it leads copy their source: per link, a thread
//    that follows the source's metadata, and per source broker a thread that fetches the
//    partitions that broker leads (mirror/partition_copier.h).
// Progress goes to partitions::MirrorStatus (DescribeMirrorLinks, /metrics).
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace brokerd::metadata {
class MetadataStore;
}  // namespace brokerd::metadata
namespace brokerd::partitions {
class MirrorStatus;
class PartitionManager;
}  // namespace brokerd::partitions

namespace brokerd::mirror {

struct MirrorOptions {
  int32_t node_id = 0;
  int32_t replication_factor = 1;         // default.replication.factor: of the mirror topics
  int32_t wait_max_ms = 500;              // mirror.fetch.wait.max.ms
  int32_t partition_max_bytes = 1 << 20;  // mirror.fetch.max.bytes
  int32_t response_max_bytes = 10 << 20;  // mirror.fetch.response.max.bytes
  int64_t metadata_refresh_ms = 5000;     // mirror.metadata.refresh.interval.ms
  int64_t backoff_ms = 1000;              // mirror.fetch.backoff.ms
  int64_t offsets_sync_ms = 5000;         // mirror.offsets.sync.interval.ms
  std::string password_secret;            // password.encoder.secret: unseals the source password
  // Of every call to the source; also how long a stop may wait for a call in flight.
  int32_t request_timeout_ms = 10000;
};

class MirrorService {
 public:
  MirrorService(MirrorOptions options, metadata::MetadataStore& metadata, partitions::PartitionManager& partitions,
                partitions::MirrorStatus& status);
  ~MirrorService();
  MirrorService(const MirrorService&) = delete;
  MirrorService& operator=(const MirrorService&) = delete;

  void start();
  // Ends every thread after its current request (at most a fetch's wait plus a round trip).
  void stop();

 private:
  class LinkWorker;
  void coordinate();
  void supervise();
  // Sleeps up to `ms`, less if stop() is called; false once stopping.
  bool pause(int64_t ms);

  MirrorOptions options_;
  metadata::MetadataStore& metadata_;
  partitions::PartitionManager& partitions_;
  partitions::MirrorStatus& status_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread coordinator_;
  std::thread supervisor_;
  std::map<std::string, std::unique_ptr<LinkWorker>> workers_;  // by link (supervisor thread only)
};

}  // namespace brokerd::mirror
