#include "brokerd/storage/log_manager.h"

#include <algorithm>
#include <fstream>

#include "brokerd/common/logger.h"

namespace brokerd::storage {

namespace fs = std::filesystem;

std::optional<std::pair<std::string, int32_t>> LogManager::parse_partition_dir(const std::string& name) {
  auto dash = name.rfind('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == name.size()) return std::nullopt;
  int64_t p = 0;
  for (size_t i = dash + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    p = p * 10 + (name[i] - '0');
    if (p > INT32_MAX) return std::nullopt;
  }
  return std::make_pair(name.substr(0, dash), static_cast<int32_t>(p));
}

LogManager::LogManager(std::vector<fs::path> log_dirs, std::function<LogConfig(const std::string&)> config_for)
    : log_dirs_(std::move(log_dirs)), config_for_(std::move(config_for)) {
  auto logger = module_logger("storage");
  for (const auto& dir : log_dirs_) {
    fs::create_directories(dir);
    fs::path marker = dir / kCleanShutdownFile;
    bool clean = fs::exists(marker);
    fs::remove(marker);
    for (const auto& e : fs::directory_iterator(dir)) {
      if (!e.is_directory()) continue;
      std::string name = e.path().filename().string();
      if (name.ends_with("-delete")) {  // a removal interrupted by a crash
        fs::remove_all(e.path());
        continue;
      }
      auto tp = parse_partition_dir(name);
      if (!tp) continue;
      auto log = Log::open(e.path(), config_for_ ? config_for_(tp->first) : LogConfig{}, clean);
      logs_[*tp] = Entry{dir, std::move(log)};
    }
    logger->info("{}: opened ({} shutdown)", dir.string(), clean ? "clean" : "unclean");
  }
}

LogManager::~LogManager() { close_all(); }

Log* LogManager::create(const std::string& topic, int32_t partition, const LogConfig& cfg) {
  auto key = std::make_pair(topic, partition);
  if (auto it = logs_.find(key); it != logs_.end()) return it->second.log.get();
  // Balance by partition count over the dirs still online.
  std::map<fs::path, size_t> counts;
  for (const auto& d : log_dirs_) {
    if (std::find(offline_dirs_.begin(), offline_dirs_.end(), d) == offline_dirs_.end()) counts[d] = 0;
  }
  if (counts.empty()) return nullptr;
  for (const auto& [_, e] : logs_) {
    if (auto it = counts.find(e.log_dir); it != counts.end()) ++it->second;
  }
  auto best = std::min_element(counts.begin(), counts.end(), [](auto& a, auto& b) { return a.second < b.second; });
  fs::path dir = best->first / (topic + "-" + std::to_string(partition));
  auto log = Log::open(dir, cfg, true);
  Log* raw = log.get();
  logs_[key] = Entry{best->first, std::move(log)};
  return raw;
}

Log* LogManager::get(const std::string& topic, int32_t partition) const {
  auto it = logs_.find(std::make_pair(topic, partition));
  return it == logs_.end() ? nullptr : it->second.log.get();
}

bool LogManager::remove(const std::string& topic, int32_t partition) {
  auto it = logs_.find(std::make_pair(topic, partition));
  if (it == logs_.end()) return false;
  fs::path dir = it->second.log->dir();
  it->second.log->close();
  logs_.erase(it);
  // Rename first so a crash mid-delete never leaves a half-deleted partition that loads.
  fs::path doomed = dir;
  doomed += "." + std::to_string(std::hash<std::string>{}(dir.string()) % 100000) + "-delete";
  std::error_code ec;
  fs::rename(dir, doomed, ec);
  fs::remove_all(ec ? dir : doomed, ec);
  return true;
}

void LogManager::close_all() {
  if (closed_) return;
  for (auto& [_, e] : logs_) e.log->close();
  for (const auto& dir : log_dirs_) {
    if (std::find(offline_dirs_.begin(), offline_dirs_.end(), dir) != offline_dirs_.end()) continue;
    std::ofstream(dir / kCleanShutdownFile) << "clean\n";
  }
  closed_ = true;
}

void LogManager::for_each(const std::function<void(const std::string&, int32_t, Log&)>& fn) const {
  for (const auto& [key, e] : logs_) fn(key.first, key.second, *e.log);
}

void LogManager::mark_offline(const fs::path& dir) {
  if (std::find(offline_dirs_.begin(), offline_dirs_.end(), dir) == offline_dirs_.end()) offline_dirs_.push_back(dir);
}

}  // namespace brokerd::storage
