#pragma once
// meta.properties in every log dir, as Kafka keeps it: the cluster id and this node's id.
// A log dir that belongs to another node or cluster stops the start.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace brokerd::metadata {

// Reads the cluster id from the log dirs, or writes one to each: `expected` if given (the
// cluster's id every node agrees on), else a new random one (a node alone). Throws
// std::runtime_error naming the dir when ids disagree with each other or with `expected`.
// The log dirs that hold no meta.properties yet: new ones, which ensure_node_identity()
// formats (a log dir is never without it once a node has started on it).
std::vector<std::filesystem::path> new_log_dirs(const std::vector<std::filesystem::path>& log_dirs);

std::string ensure_node_identity(const std::vector<std::filesystem::path>& log_dirs, int32_t node_id,
                                 const std::optional<std::string>& expected = std::nullopt);

}  // namespace brokerd::metadata
