#pragma once
// A log dir's own files: the marker of a clean shutdown, and each partition directory's name
// and partition.metadata.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "brokerd/partitions/topic_partition.h"
#include "brokerd/protocol/uuid.h"

namespace brokerd::partitions {

// "<topic>-<n>" -> {topic, n}; nullopt for anything else (temporary or deleted dirs).
std::optional<TopicPartition> parse_dir_name(const std::string& name);

// Whether every log dir holds the marker of a clean shutdown (before load() removes it).
bool log_dirs_shut_down_cleanly(const std::vector<std::filesystem::path>& log_dirs);
// Whether `log_dir` holds the marker; removes it (a crash from now on is an unclean stop).
bool take_clean_shutdown_marker(const std::filesystem::path& log_dir);
// Written last by a shutdown that flushed and closed every log.
void mark_clean_shutdown(const std::filesystem::path& log_dir);

// Reads "<log dir>/<topic>-<partition>/partition.metadata" (topic id), if present.
std::optional<protocol::Uuid> read_partition_metadata(const std::filesystem::path& partition_dir);
void write_partition_metadata(const std::filesystem::path& partition_dir, const protocol::Uuid& topic_id);

}  // namespace brokerd::partitions
