#pragma once
// Kafka's offset checkpoint file, one per log dir (replication-offset-checkpoint holds each
// partition's high watermark): a version line (0), a count line, then one
// "<topic> <partition> <offset>" line per partition.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace brokerd::storage {

inline constexpr const char* kReplicationOffsetCheckpointFile = "replication-offset-checkpoint";

struct OffsetCheckpointEntry {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  bool operator==(const OffsetCheckpointEntry&) const = default;
};

// The text of a checkpoint holding `entries`, and back: nullopt when the text is not a
// version-0 checkpoint whose count matches its lines.
std::string format_offset_checkpoint(const std::vector<OffsetCheckpointEntry>& entries);
std::optional<std::vector<OffsetCheckpointEntry>> parse_offset_checkpoint(const std::string& text);

// Replaces `path` with a checkpoint of `entries`: a temporary file, synced, renamed over it,
// and the directory synced, so a crash leaves the old file or the new one. False (errno
// set) when a step failed; the old file is then still there.
bool write_offset_checkpoint(const std::filesystem::path& path, const std::vector<OffsetCheckpointEntry>& entries);
// nullopt when the file is absent; throws std::runtime_error when it exists but is not a
// checkpoint (the caller decides whether to go on without it).
std::optional<std::vector<OffsetCheckpointEntry>> read_offset_checkpoint(const std::filesystem::path& path);

}  // namespace brokerd::storage
