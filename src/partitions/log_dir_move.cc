#include "brokerd/partitions/log_dir_move.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>
#include <system_error>

namespace brokerd::partitions {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void fail(const std::string& what, const fs::path& path) {
  throw std::system_error(errno, std::generic_category(), what + " " + path.string());
}

// Closes the descriptor on every way out.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

bool ends_with(const std::string& s, std::string_view suffix) { return s.ends_with(suffix); }

void sync_dir(const fs::path& dir) {
  Fd d{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (d.fd < 0 || ::fsync(d.fd) != 0) fail("syncing directory", dir);
}

// Copies [offset, size) of `from` to the same place in `to` (created, and cut at `size`
// when whole), then syncs it. Returns the bytes written.
uint64_t copy_range(const fs::path& from, const fs::path& to, uint64_t offset, uint64_t size, bool whole) {
  Fd in{::open(from.c_str(), O_RDONLY | O_CLOEXEC)};
  if (in.fd < 0) fail("opening", from);
  Fd out{::open(to.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644)};
  if (out.fd < 0) fail("creating", to);
  if (whole && ::ftruncate(out.fd, 0) != 0) fail("truncating", to);
  std::vector<char> buf(1 << 20);
  uint64_t pos = offset;
  while (pos < size) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), size - pos));
    const ssize_t n = ::pread(in.fd, buf.data(), want, static_cast<off_t>(pos));
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("reading", from);
    }
    if (n == 0) break;  // the source was cut meanwhile: the next round sees its new size
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = ::pwrite(out.fd, buf.data() + done, static_cast<size_t>(n - done), static_cast<off_t>(pos + done));
      if (w < 0) {
        if (errno == EINTR) continue;
        fail("writing", to);
      }
      done += w;
    }
    pos += static_cast<uint64_t>(n);
  }
  if (::ftruncate(out.fd, static_cast<off_t>(pos)) != 0) fail("truncating", to);
  if (::fdatasync(out.fd) != 0) fail("syncing", to);
  return pos - offset;
}

void rename_durably(const fs::path& from, const fs::path& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) fail("renaming to " + to.string(), from);
  sync_dir(to.parent_path());
  if (from.parent_path() != to.parent_path()) sync_dir(from.parent_path());
}

// "<name><suffix>" -> "<name>", or empty when `entry` does not end with the suffix.
std::string without(const std::string& entry, std::string_view suffix) {
  return entry.size() > suffix.size() && entry.ends_with(suffix) ? entry.substr(0, entry.size() - suffix.size())
                                                                 : std::string();
}

}  // namespace

std::vector<PartitionFile> list_partition_files(const fs::path& dir) {
  std::vector<PartitionFile> out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (ends_with(name, ".cleaned") || ends_with(name, ".swap") || ends_with(name, ".deleted") ||
        ends_with(name, ".tmp"))
      continue;
    struct stat st {};
    if (::stat(entry.path().c_str(), &st) != 0) {
      if (errno == ENOENT) continue;  // deleted since the listing
      fail("reading", entry.path());
    }
    if (!S_ISREG(st.st_mode)) continue;
    out.push_back({name, st.st_ino, static_cast<uint64_t>(st.st_size),
                   static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec});
  }
  return out;
}

uint64_t copy_round(const fs::path& from, const fs::path& to, const std::vector<PartitionFile>& files,
                    CopiedFiles& copied, const std::vector<std::string>& always) {
  fs::create_directories(to);
  uint64_t written = 0;
  std::set<std::string> present;
  for (const auto& f : files) {
    present.insert(f.name);
    const bool forced = std::find(always.begin(), always.end(), f.name) != always.end();
    auto it = copied.find(f.name);
    if (!forced && it != copied.end() && it->second.inode == f.inode && it->second.size == f.size &&
        it->second.mtime_ns == f.mtime_ns)
      continue;
    bool grew = !forced && it != copied.end() && it->second.inode == f.inode && it->second.size < f.size &&
                ends_with(f.name, ".log");
    // Appending to a copy that is not what this move wrote (deleted meanwhile, say) would
    // leave a hole: copy it whole instead.
    if (grew) {
      struct stat st {};
      grew = ::stat((to / f.name).c_str(), &st) == 0 && static_cast<uint64_t>(st.st_size) == it->second.size;
    }
    try {
      written += copy_range(from / f.name, to / f.name, grew ? it->second.size : 0, f.size, !grew);
    } catch (const std::system_error& e) {
      if (e.code() != std::errc::no_such_file_or_directory || fs::exists(from / f.name)) throw;
      continue;  // deleted (retention, a swap) since the listing
    }
    copied[f.name] = f;
  }
  for (auto it = copied.begin(); it != copied.end();) {
    if (present.contains(it->first)) {
      ++it;
      continue;
    }
    fs::remove(to / it->first);
    it = copied.erase(it);
  }
  sync_dir(to);
  return written;
}

void commit_move(const fs::path& source, const fs::path& future, const fs::path& final_dir) {
  const fs::path moved = source.string() + kMovedSuffix;
  const fs::path marker = final_dir.string() + kCompleteSuffix;
  {
    Fd m{::open(marker.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
    if (m.fd < 0 || ::fsync(m.fd) != 0) fail("writing", marker);
  }
  sync_dir(marker.parent_path());
  if (::rename(source.c_str(), moved.c_str()) != 0) fail("renaming to " + moved.string(), source);
  try {
    sync_dir(source.parent_path());
    if (::rename(future.c_str(), final_dir.c_str()) != 0) fail("renaming to " + final_dir.string(), future);
    try {
      sync_dir(final_dir.parent_path());
    } catch (...) {
      ::rename(final_dir.c_str(), future.c_str());
      throw;
    }
  } catch (...) {
    ::rename(moved.c_str(), source.c_str());
    ::unlink(marker.c_str());
    try {
      sync_dir(source.parent_path());
    } catch (...) {
    }
    throw;
  }
}

std::vector<std::string> recover_moves(const std::vector<fs::path>& log_dirs) {
  std::vector<std::string> actions;
  auto live_anywhere = [&](const std::string& name) {
    return std::any_of(log_dirs.begin(), log_dirs.end(), [&](const fs::path& d) { return fs::is_directory(d / name); });
  };
  // The whole copy of `name` (its marker written before the source was renamed), if any.
  auto future_of = [&](const std::string& name) -> fs::path {
    for (const auto& d : log_dirs)
      if (fs::is_directory(d / (name + kFutureSuffix)) && fs::exists(d / (name + kCompleteSuffix)))
        return d / (name + kFutureSuffix);
    return {};
  };
  // The entries ending in `suffix`, listed before any is changed.
  auto entries_with = [&](std::string_view suffix) {
    std::vector<fs::path> out;
    for (const auto& dir : log_dirs) {
      if (!fs::is_directory(dir)) continue;
      for (const auto& entry : fs::directory_iterator(dir))
        if (!without(entry.path().filename().string(), suffix).empty()) out.push_back(entry.path());
    }
    return out;
  };
  for (const auto& path : entries_with(kMovedSuffix)) {
    const std::string name = without(path.filename().string(), kMovedSuffix);
    if (live_anywhere(name)) {
      actions.push_back("deleting " + path.string() + ": its move committed");
      fs::remove_all(path);
    } else if (auto future = future_of(name); !future.empty()) {
      rename_durably(future, future.parent_path() / name);
      actions.push_back("finishing the move of " + name + " to " + future.parent_path().string());
      fs::remove_all(path);
    } else {
      rename_durably(path, path.parent_path() / name);
      actions.push_back("restoring " + (path.parent_path() / name).string() + ": its copy is missing");
    }
  }
  for (const auto& path : entries_with(kFutureSuffix)) {
    actions.push_back("deleting " + path.string() + ": an unfinished move");
    fs::remove_all(path);
  }
  for (const auto& path : entries_with(kCompleteSuffix)) fs::remove(path);
  return actions;
}

}  // namespace brokerd::partitions
