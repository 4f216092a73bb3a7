#pragma once
// Moving a partition's directory to another log dir of the same node (AlterReplicaLogDirs),
// as file operations. The copy is made while the partition keeps serving, in rounds that
// each copy what changed since the last one, into "<target>/<topic>-<p>.future". The last
// round runs with the log closed; then commit() swaps the copy in, crash-safely:
//   0. "<target>/<tp>.future.complete" is written: the copy is whole
//   1. "<source>/<tp>"        -> "<source>/<tp>.moved"   (the copy is now the only live one)
//   2. "<target>/<tp>.future" -> "<target>/<tp>"
//   3. "<source>/<tp>.moved" and the marker are deleted.
// recover_moves() finishes or undoes what a crash interrupted, before the logs are opened.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace brokerd::partitions {

inline constexpr const char* kFutureSuffix = ".future";
inline constexpr const char* kMovedSuffix = ".moved";
inline constexpr const char* kCompleteSuffix = ".future.complete";

// One regular file of a partition directory as a round found it.
struct PartitionFile {
  std::string name;
  ino_t inode = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
};

// What a move has copied so far, by file name.
using CopiedFiles = std::map<std::string, PartitionFile>;

// The files of a partition directory worth copying: not those a cleaner or a deletion is
// in the middle of (.cleaned, .swap, .deleted). Throws std::system_error.
std::vector<PartitionFile> list_partition_files(const std::filesystem::path& dir);

// Brings `to` in line with `files` of `from`: a .log file that only grew gets its new bytes
// (the caller clears `copied` after a truncation, which can also make a file grow back);
// any other file that changed (other inode, size or modification time), or that `always`
// names, is copied whole; files of `to` no longer in `files` are removed. Every file written is synced, and
// `to` itself. Returns the bytes written. Throws std::system_error (ENOSPC and the like).
uint64_t copy_round(const std::filesystem::path& from, const std::filesystem::path& to,
                    const std::vector<PartitionFile>& files, CopiedFiles& copied,
                    const std::vector<std::string>& always = {});

// Steps 0 to 2 above, each made durable with a sync. Throws std::system_error, having put
// back what it changed (the source in place, the copy as ".future").
void commit_move(const std::filesystem::path& source, const std::filesystem::path& future,
                 const std::filesystem::path& final_dir);

// At start, before any partition directory is read: a ".moved" directory is deleted when the
// live one exists elsewhere, else its ".future" copy is renamed into place if its marker says
// it is whole, else it is renamed back; then every ".future" copy and marker left is deleted
// (the move had not committed). Returns one line per action.
std::vector<std::string> recover_moves(const std::vector<std::filesystem::path>& log_dirs);

}  // namespace brokerd::partitions
