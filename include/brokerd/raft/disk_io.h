#pragma once
// Small durable-file helpers shared by the on-disk raft stores. All of them throw
// std::system_error on an I/O failure: a store that cannot persist must stop the node.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace brokerd::raft {

// Replaces `path` with `data` crash-safely: writes `path` + `tmp_suffix`, fsyncs it, renames
// it over `path` and fsyncs the directory. After a crash either the old or the new content
// is found, never a mix.
void write_file_durably(const std::filesystem::path& path, std::string_view data,
                        std::string_view tmp_suffix = ".tmp");

// Makes creations, renames and removals in `dir` durable.
void fsync_dir(const std::filesystem::path& dir);

// The whole file; nullopt if it does not exist.
std::optional<std::string> read_whole_file(const std::filesystem::path& path);

}  // namespace brokerd::raft
