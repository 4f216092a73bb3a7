#pragma once
// What a shard of the partition manager holds: its hosted partitions, those that could not
// be opened, the cleaner's bookkeeping and the reconciliation of images. Touched only on the
// shard's reactor (PartitionManager::executor_of).
#include <boost/asio/steady_timer.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "brokerd/partitions/partition_manager.h"
#include "brokerd/storage/cleaner.h"

namespace brokerd::partitions {

// The cleaner's bookkeeping of one compacted partition (home shard only).
struct CleanerState {
  storage::CleanerCheckpoint checkpoint;
  bool loaded = false;
  bool in_progress = false;
  int64_t next_check_ms = 0;
};

// A hosted partition whose log could not be opened (EMFILE, EACCES, EIO, ENOSPC): it answers
// KAFKA_STORAGE_ERROR and is opened again after a while.
struct OfflinePartition {
  protocol::Uuid topic_id;
  std::filesystem::path dir;
  bool clean = true;
  std::string reason;
  int64_t retry_at_ms = 0;
  bool metadata_checked = false;  // its partition.metadata names this topic
};
constexpr int64_t kOfflineRetryMs = 5000;

struct PartitionManager::Shard {
  std::unordered_map<TopicPartition, std::unique_ptr<Partition>> partitions;
  std::unordered_map<TopicPartition, OfflinePartition> offline;
  std::unordered_map<TopicPartition, CleanerState> cleaner;
  std::shared_ptr<const metadata::MetadataImage> image;  // the last one reconciled
  // The newest image handed over, applied by the reconciliation loop while `reconciling`;
  // callers waiting for an image at an offset (the first) are woken through the timer.
  std::shared_ptr<const metadata::MetadataImage> wanted;
  bool reconciling = false;
  std::vector<std::pair<int64_t, std::shared_ptr<boost::asio::steady_timer>>> waiters;
  std::vector<LeadershipListener> listeners;
  // High watermarks the checkpoints recorded, taken by the partitions as they open.
  std::unordered_map<TopicPartition, int64_t> hw_at_start;
  // Segment descriptors held by this shard's periodic syncs, queued or running: they cannot
  // be released until the sync is done.
  int64_t descriptors_syncing = 0;
  // When the cleaner next looks over the shard's partitions (no partition is due sooner
  // than log.cleaner.backoff.ms; a shard of 60,000 partitions is not walked every tick).
  int64_t next_clean_check_ms = 0;

  void leadership_changed(const TopicPartition& tp, bool leads) const {
    for (const auto& fn : listeners) fn(tp, leads);
  }
  // The topic defaults the shard's partitions were last configured with.
  std::shared_ptr<const metadata::ConfigMap> defaults;
};

}  // namespace brokerd::partitions
