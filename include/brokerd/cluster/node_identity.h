#pragma once
// meta.properties in every log dir, as Kafka keeps it: the cluster id and this node's id.
// A log dir that belongs to another node or cluster stops the start.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace brokerd::cluster {

// Reads the cluster id from the log dirs, or creates a new one and writes it to each.
// Throws std::runtime_error naming the dir when ids disagree.
std::string ensure_node_identity(const std::vector<std::filesystem::path>& log_dirs, int32_t node_id);

}  // namespace brokerd::cluster
