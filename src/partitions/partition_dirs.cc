#include "brokerd/partitions/partition_dirs.h"

#include <fstream>

#include "brokerd/metadata/metadata_image.h"

namespace brokerd::partitions {
namespace fs = std::filesystem;
namespace {

constexpr const char* kCleanShutdownMarker = ".brokerd-clean-shutdown";
constexpr const char* kPartitionMetadata = "partition.metadata";

}  // namespace

// "<topic>-<n>" -> {topic, n}; nullopt for anything else (temporary or deleted dirs).
std::optional<TopicPartition> parse_dir_name(const std::string& name) {
  auto dash = name.rfind('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 >= name.size()) return std::nullopt;
  int32_t p = 0;
  for (size_t i = dash + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || p > 100000000) return std::nullopt;
    p = p * 10 + (name[i] - '0');
  }
  std::string topic = name.substr(0, dash);
  if (!metadata::valid_topic_name(topic)) return std::nullopt;
  return TopicPartition{topic, p};
}

bool log_dirs_shut_down_cleanly(const std::vector<fs::path>& log_dirs) {
  for (const auto& dir : log_dirs)
    if (!fs::exists(dir / kCleanShutdownMarker)) return false;
  return true;
}

std::optional<protocol::Uuid> read_partition_metadata(const fs::path& dir) {
  std::ifstream in(dir / kPartitionMetadata);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("topic_id: ")) return protocol::Uuid::from_string(line.substr(10));
  }
  return std::nullopt;
}

void write_partition_metadata(const fs::path& dir, const protocol::Uuid& topic_id) {
  auto tmp = dir / (std::string(kPartitionMetadata) + ".tmp");
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << "version: 0\ntopic_id: " << topic_id.to_string() << "\n";
  }
  fs::rename(tmp, dir / kPartitionMetadata);
}

bool take_clean_shutdown_marker(const fs::path& dir) {
  const bool clean = fs::exists(dir / kCleanShutdownMarker);
  fs::remove(dir / kCleanShutdownMarker);
  return clean;
}

void mark_clean_shutdown(const fs::path& dir) { std::ofstream(dir / kCleanShutdownMarker) << "clean\n"; }


}  // namespace brokerd::partitions
