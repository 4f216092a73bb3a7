#pragma once
// A fixed-size hash map from record key to the offset of its latest occurrence, built by
// the cleaner over the dirty part of a log. Keys are stored as 128-bit hashes (never the
// key bytes), so memory is fixed up front: 24 bytes a slot. Used by one thread.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace brokerd::storage {

struct KeyHash {
  uint64_t lo = 0;
  uint64_t hi = 0;
  bool operator==(const KeyHash&) const = default;
};

// 128-bit hash of a record key (a MurmurHash3-style x64 mix).
KeyHash hash_key(std::span<const std::byte> key);

class OffsetMap {
 public:
  static constexpr size_t kSlotBytes = 24;

  // `memory_bytes` of slots; the map counts as full at `load_factor` of them.
  explicit OffsetMap(size_t memory_bytes, double load_factor = 0.9);

  // Records that `key` occurs at `offset` (offsets must not decrease across calls).
  void put(std::span<const std::byte> key, int64_t offset) { put(hash_key(key), offset); }
  void put(const KeyHash& h, int64_t offset);
  // The latest offset of `key`, or -1.
  int64_t get(std::span<const std::byte> key) const { return get(hash_key(key)); }
  int64_t get(const KeyHash& h) const;

  size_t size() const { return size_; }
  size_t slots() const { return slots_.size(); }
  // Keys the map takes before it counts as full.
  size_t capacity() const { return limit_; }
  bool full() const { return size_ >= limit_; }
  // The largest offset put, or -1.
  int64_t latest_offset() const { return latest_; }
  void clear();

 private:
  struct Slot {
    uint64_t lo;
    uint64_t hi;
    int64_t offset;  // -1 = empty
  };
  size_t index_of(const KeyHash& h) const;

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
  size_t limit_ = 0;
  int64_t latest_ = -1;
};

}  // namespace brokerd::storage
