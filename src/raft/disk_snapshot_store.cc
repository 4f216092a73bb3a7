#include "brokerd/raft/disk_snapshot_store.h"

#include <cstdio>
#include <stdexcept>

#include "brokerd/raft/disk_io.h"
#include "brokerd/storage/crc32c.h"

namespace brokerd::raft {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kMagic = "BRKDSNAP";
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderSize = 8 + 4 + 8 + 4;  // magic, version, length, crc

void put_be(std::string& out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t get_be(std::string_view in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(in[at + i]);
  return v;
}

std::optional<int64_t> parse_digits(std::string_view s) {
  if (s.empty()) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

std::string DiskSnapshotStore::file_name(OffsetAndEpoch id) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%020lld-%010d", static_cast<long long>(id.offset), id.epoch);
  return std::string(buf) + std::string(kSuffix);
}

std::optional<OffsetAndEpoch> DiskSnapshotStore::parse_file_name(std::string_view name) {
  if (!ends_with(name, kSuffix)) return std::nullopt;
  name.remove_suffix(kSuffix.size());
  if (name.size() != 31 || name[20] != '-') return std::nullopt;
  auto offset = parse_digits(name.substr(0, 20));
  auto epoch = parse_digits(name.substr(21));
  if (!offset || !epoch || *epoch > INT32_MAX) return std::nullopt;
  return OffsetAndEpoch{*offset, static_cast<Epoch>(*epoch)};
}

DiskSnapshotStore::DiskSnapshotStore(fs::path dir) : dir_(std::move(dir)) {
  fs::create_directories(dir_);
  bool removed = false;
  for (const auto& e : fs::directory_iterator(dir_)) {
    std::string name = e.path().filename().string();
    if (ends_with(name, std::string(kSuffix) + std::string(kPartSuffix))) {
      fs::remove(e.path());  // a save a crash interrupted: never renamed, never used
      removed = true;
    } else if (auto id = parse_file_name(name)) {
      ids_.insert(*id);
    }
  }
  if (removed) fsync_dir(dir_);
}

std::optional<Snapshot> DiskSnapshotStore::read(OffsetAndEpoch id) const {
  if (!ids_.count(id)) return std::nullopt;
  fs::path path = dir_ / file_name(id);
  auto text = read_whole_file(path);
  if (!text) return std::nullopt;
  auto corrupt = [&](const char* why) {
    return std::runtime_error("corrupt snapshot " + path.string() + ": " + why);
  };
  if (text->size() < kHeaderSize || std::string_view(*text).substr(0, 8) != kMagic)
    throw corrupt("bad header");
  if (get_be(*text, 8, 4) != kVersion) throw corrupt("unknown version");
  uint64_t length = get_be(*text, 12, 8);
  if (length != text->size() - kHeaderSize) throw corrupt("bad length");
  uint32_t crc = static_cast<uint32_t>(get_be(*text, 20, 4));
  if (storage::crc32c(text->data() + kHeaderSize, length) != crc) throw corrupt("bad checksum");
  return Snapshot{id, text->substr(kHeaderSize)};
}

std::optional<Snapshot> DiskSnapshotStore::latest() const {
  if (ids_.empty()) return std::nullopt;
  const OffsetAndEpoch id = *ids_.rbegin();
  if (!cached_ || !(cached_->id == id)) cached_ = read(id);
  return cached_;
}

void DiskSnapshotStore::save(const Snapshot& s) {
  if (!ids_.empty() && ids_.rbegin()->offset >= s.id.offset) return;
  std::string bytes(kMagic);
  put_be(bytes, kVersion, 4);
  put_be(bytes, s.data.size(), 8);
  put_be(bytes, storage::crc32c(s.data.data(), s.data.size()), 4);
  bytes += s.data;
  write_file_durably(dir_ / file_name(s.id), bytes, kPartSuffix);
  ids_.insert(s.id);
  cached_ = s;
  delete_before(s.id.offset);
}

size_t DiskSnapshotStore::delete_before(Offset offset) {
  size_t n = 0;
  for (auto it = ids_.begin(); it != ids_.end() && it->offset < offset;) {
    fs::remove(dir_ / file_name(*it));
    it = ids_.erase(it);
    ++n;
  }
  if (n) fsync_dir(dir_);
  return n;
}

}  // namespace brokerd::raft
