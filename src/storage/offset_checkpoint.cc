#include "brokerd/storage/offset_checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace brokerd::storage {
namespace fs = std::filesystem;

namespace {

template <typename T>
bool parse_number(std::string_view s, T& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size();
}

bool sync_path(const fs::path& p, int flags) {
  int fd = ::open(p.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::fsync(fd) == 0;
  const int saved = errno;
  ::close(fd);
  errno = saved;
  return ok;
}

}  // namespace

std::string format_offset_checkpoint(const std::vector<OffsetCheckpointEntry>& entries) {
  std::string out = fmt::format("0\n{}\n", entries.size());
  for (const auto& e : entries) fmt::format_to(std::back_inserter(out), "{} {} {}\n", e.topic, e.partition, e.offset);
  return out;
}

std::optional<std::vector<OffsetCheckpointEntry>> parse_offset_checkpoint(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  int version = -1;
  size_t count = 0;
  if (!std::getline(in, line) || !parse_number(line, version) || version != 0) return std::nullopt;
  if (!std::getline(in, line) || !parse_number(line, count)) return std::nullopt;
  std::vector<OffsetCheckpointEntry> entries;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    // Topic names hold no spaces: exactly three fields.
    const auto a = line.find(' ');
    const auto b = a == std::string::npos ? a : line.find(' ', a + 1);
    if (b == std::string::npos || line.find(' ', b + 1) != std::string::npos || a == 0) return std::nullopt;
    OffsetCheckpointEntry e;
    e.topic = line.substr(0, a);
    if (!parse_number(std::string_view(line).substr(a + 1, b - a - 1), e.partition) ||
        !parse_number(std::string_view(line).substr(b + 1), e.offset))
      return std::nullopt;
    entries.push_back(std::move(e));
    if (entries.size() > count) return std::nullopt;
  }
  if (entries.size() != count) return std::nullopt;
  return entries;
}

bool write_offset_checkpoint(const fs::path& path, const std::vector<OffsetCheckpointEntry>& entries) {
  const fs::path tmp = fs::path(path).concat(".tmp");
  {
    std::ofstream out(tmp, std::ios::trunc | std::ios::binary);
    out << format_offset_checkpoint(entries);
    out.flush();
    if (!out) return false;
  }
  if (!sync_path(tmp, O_RDONLY)) return false;
  if (::rename(tmp.c_str(), path.c_str()) != 0) return false;
  return sync_path(path.parent_path(), O_RDONLY | O_DIRECTORY);
}

std::optional<std::vector<OffsetCheckpointEntry>> read_offset_checkpoint(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (!fs::exists(path)) return std::nullopt;
    throw std::runtime_error(fmt::format("cannot read {}", path.string()));
  }
  std::stringstream text;
  text << in.rdbuf();
  auto parsed = parse_offset_checkpoint(text.str());
  if (!parsed) throw std::runtime_error(fmt::format("{} is not an offset checkpoint", path.string()));
  return parsed;
}

}  // namespace brokerd::storage
