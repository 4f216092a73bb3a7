#pragma once
// All partition logs of a node across its log dirs.
//
// Not thread-safe: the caller serialises calls (in the broker, one owner thread or a
// strand). Each returned Log then follows its own threading rule (see log.h).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "brokerd/storage/log.h"

namespace brokerd::storage {

class LogManager {
 public:
  static constexpr const char* kCleanShutdownFile = ".brokerd-clean-shutdown";

  // Opens every `<topic>-<partition>` directory of every log dir. The clean-shutdown
  // marker of each dir is read and removed, so a crash from here on is seen as unclean.
  // `config_for(topic)` supplies each topic's config at open.
  LogManager(std::vector<std::filesystem::path> log_dirs,
             std::function<LogConfig(const std::string& topic)> config_for);
  ~LogManager();

  // Creates the partition's log in the log dir holding the fewest partitions, or returns
  // the existing one.
  Log* create(const std::string& topic, int32_t partition, const LogConfig& cfg);
  Log* get(const std::string& topic, int32_t partition) const;
  // Closes the log, renames its directory to `<name>.<n>-delete` and deletes it.
  bool remove(const std::string& topic, int32_t partition);
  // Closes every log and writes the clean-shutdown marker in every log dir.
  void close_all();

  size_t size() const { return logs_.size(); }
  void for_each(const std::function<void(const std::string& topic, int32_t partition, Log& log)>& fn) const;

  // Log dirs that failed (ENOSPC, EIO); appends to logs there return KAFKA_STORAGE_ERROR.
  const std::vector<std::filesystem::path>& offline_dirs() const { return offline_dirs_; }
  void mark_offline(const std::filesystem::path& dir);

  // "topic-3" -> {"topic", 3}; topic names may contain '-'.
  static std::optional<std::pair<std::string, int32_t>> parse_partition_dir(const std::string& name);

 private:
  struct Entry {
    std::filesystem::path log_dir;
    std::unique_ptr<Log> log;
  };
  std::vector<std::filesystem::path> log_dirs_;
  std::function<LogConfig(const std::string&)> config_for_;
  std::map<std::pair<std::string, int32_t>, Entry> logs_;
  std::vector<std::filesystem::path> offline_dirs_;
  bool closed_ = false;
};

}  // namespace brokerd::storage
