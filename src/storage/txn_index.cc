#include "brokerd/storage/txn_index.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <iterator>
#include <system_error>

#include "brokerd/common/logger.h"

namespace brokerd::storage {

namespace fs = std::filesystem;

namespace {

void put_be(std::byte* out, uint64_t v, size_t width) {
  for (size_t i = 0; i < width; ++i) out[i] = static_cast<std::byte>((v >> (8 * (width - 1 - i))) & 0xff);
}

int64_t get_be(const std::byte* in, size_t width) {
  uint64_t u = 0;
  for (size_t i = 0; i < width; ++i) u = (u << 8) | std::to_integer<uint8_t>(in[i]);
  return static_cast<int64_t>(u);
}

bool write_all(int fd, std::span<const std::byte> bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

void encode_aborted_txn(const AbortedTxn& t, std::span<std::byte, TxnIndex::kEntryBytes> out) {
  put_be(out.data(), 0, 2);  // version
  put_be(out.data() + 2, static_cast<uint64_t>(t.producer_id), 8);
  put_be(out.data() + 10, static_cast<uint64_t>(t.first_offset), 8);
  put_be(out.data() + 18, static_cast<uint64_t>(t.last_offset), 8);
  put_be(out.data() + 26, static_cast<uint64_t>(t.last_stable_offset), 8);
}

std::optional<AbortedTxn> decode_aborted_txn(std::span<const std::byte> in) {
  if (in.size() < TxnIndex::kEntryBytes || get_be(in.data(), 2) != 0) return std::nullopt;
  return AbortedTxn{get_be(in.data() + 2, 8), get_be(in.data() + 10, 8), get_be(in.data() + 18, 8),
                    get_be(in.data() + 26, 8)};
}

const std::vector<AbortedTxn>& TxnIndex::entries() const {
  if (entries_) return *entries_;
  entries_.emplace();
  std::ifstream in(path_, std::ios::binary);
  if (!in) return *entries_;
  std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto bytes = std::as_bytes(std::span<const char>(raw));
  // A torn last entry (a crash mid-write) is ignored; recovery rebuilds the index anyway.
  for (size_t at = 0; at + kEntryBytes <= bytes.size(); at += kEntryBytes) {
    auto t = decode_aborted_txn(bytes.subspan(at, kEntryBytes));
    if (!t) {
      module_logger("storage")->warn("{}: unknown entry version at byte {}, ignoring the rest", path_.string(), at);
      break;
    }
    entries_->push_back(*t);
  }
  return *entries_;
}

bool TxnIndex::append(const AbortedTxn& t) {
  entries();
  std::array<std::byte, kEntryBytes> buf{};
  encode_aborted_txn(t, buf);
  int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const bool ok = write_all(fd, buf);
  ::close(fd);
  if (!ok) return false;
  entries_->push_back(t);
  dirty_ = true;
  return true;
}

bool TxnIndex::rewrite() {
  const auto& es = entries();
  if (es.empty()) {
    std::error_code ec;
    fs::remove(path_, ec);
    dirty_ = false;
    return true;
  }
  std::vector<std::byte> bytes(es.size() * kEntryBytes);
  for (size_t i = 0; i < es.size(); ++i)
    encode_aborted_txn(es[i], std::span<std::byte, kEntryBytes>(bytes.data() + i * kEntryBytes, kEntryBytes));
  int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const bool ok = write_all(fd, bytes);
  ::close(fd);
  dirty_ = true;
  return ok;
}

void TxnIndex::truncate_to(int64_t offset) {
  auto& es = const_cast<std::vector<AbortedTxn>&>(entries());
  const size_t before = es.size();
  std::erase_if(es, [&](const AbortedTxn& t) { return t.last_offset >= offset; });
  if (es.size() != before) rewrite();
}

void TxnIndex::reset() {
  entries_.emplace();
  std::error_code ec;
  fs::remove(path_, ec);
  dirty_ = false;
}

void TxnIndex::set_entries(std::vector<AbortedTxn> entries) {
  entries_ = std::move(entries);
  rewrite();
}

void TxnIndex::flush() {
  if (!dirty_) return;
  int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ::fdatasync(fd);
    ::close(fd);
  }
  dirty_ = false;
}

std::optional<fs::path> TxnIndex::rename_with_suffix(const char* suffix) {
  fs::path to = path_.string() + suffix;
  std::error_code ec;
  fs::rename(path_, to, ec);
  if (ec) return std::nullopt;
  return to;
}

}  // namespace brokerd::storage
