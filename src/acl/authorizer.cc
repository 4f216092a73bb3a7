#include "brokerd/acl/authorizer.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <unordered_map>

namespace brokerd::acl {
namespace {

// Layout. A lookup is bound by cache misses, not by instructions, so each resource pattern's
// bindings are serialised into one run of bytes in a per-type arena:
//
//   GroupHeader, name, pad to 4, then `denies` DENY rules and `allows` ALLOW rules, each
//   RuleHeader, principal, host, pad to 4.
//
// A hash slot (8 bytes) points at a group, so a lookup that hits touches one slot and one
// short run of bytes (name compare and rules together); a miss touches one slot. DENYs come
// first so that once an ALLOW has matched, later groups need only their DENYs scanned.
struct GroupHeader {
  uint32_t name_len;
  uint32_t denies;
  uint32_t allows;
};
struct RuleHeader {
  uint32_t ops;            // the requested operations it matches, one bit per Operation code
  uint32_t principal_len;  // 0: any principal ("User:*"); valid principals are never empty
  uint32_t host_len;       // 0: any host ("*"); valid hosts are never empty
};

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
constexpr size_t pad4(size_t n) { return (n + 3) & ~size_t{3}; }

template <typename T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Whether a[0, n) == b[0, n), with whole-word loads that stay inside both: names and
// principals are short, and a libc memcmp call per compare showed up in profiles.
bool same_bytes(const char* a, const char* b, size_t n) {
  if (n >= 8) {
    for (size_t i = 0; i + 8 < n; i += 8)
      if (load<uint64_t>(a + i) != load<uint64_t>(b + i)) return false;
    return load<uint64_t>(a + n - 8) == load<uint64_t>(b + n - 8);
  }
  if (n >= 4) return load<uint32_t>(a) == load<uint32_t>(b) && load<uint32_t>(a + n - 4) == load<uint32_t>(b + n - 4);
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

constexpr uint32_t op_bit(Operation op) { return uint32_t{1} << static_cast<int>(op); }
constexpr uint32_t kEveryOp = ((uint32_t{1} << 15) - 1) & ~uint32_t{3};  // ALL (2) .. DESCRIBE_TOKENS (14)

// The requested operations a binding's operation matches (StandardAuthorizer): ALL matches
// everything; an ALLOW also grants what its operation implies; a DENY denies only its own.
uint32_t op_mask(Operation op, Permission perm) {
  if (op == Operation::all) return kEveryOp;
  uint32_t m = op_bit(op);
  if (perm == Permission::allow) {
    if (op == Operation::read || op == Operation::write || op == Operation::remove || op == Operation::alter)
      m |= op_bit(Operation::describe);
    if (op == Operation::alter_configs) m |= op_bit(Operation::describe_configs);
  }
  return m;
}

// Eight bytes as a little-endian number, so that the three ways PrefixHasher reads a tail
// agree on every machine.
uint64_t load_le64(const char* p) {
  uint64_t v = load<uint64_t>(p);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

// Hashes every prefix of one name in a single pass: the whole 8-byte words before a
// prefix's end are mixed once and reused by every longer prefix, so checking each distinct
// prefix length costs a word or two, not a rehash of the name.
class PrefixHasher {
 public:
  explicit PrefixHasher(std::string_view s) : s_(s) {}

  // The hash of s[0, len); len may not decrease between calls.
  uint64_t hash(size_t len) {
    while (done_ + 8 <= len) {
      state_ = (state_ ^ load_le64(s_.data() + done_)) * 0x9e3779b97f4a7c15ULL;
      state_ ^= state_ >> 29;
      done_ += 8;
    }
    uint64_t x = state_ ^ (tail(len - done_) * 0xc2b2ae3d27d4eb4fULL) ^ len;
    // Murmur3's finaliser spreads the bits over both the slot index and the tag.
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
  }

 private:
  // The n < 8 bytes after the mixed words, zero-extended. Read with one whole-word load
  // where the string allows: a memcpy of n bytes into a local would stall the load that
  // follows it (no store forwarding from several narrow stores), once per prefix length.
  uint64_t tail(size_t n) const {
    if (n == 0) return 0;
    const char* p = s_.data() + done_;
    if (done_ + 8 <= s_.size()) return load_le64(p) & (~uint64_t{0} >> (64 - 8 * n));
    if (done_ + n >= 8) return load_le64(p + n - 8) >> (64 - 8 * n);
    uint64_t v = 0;  // the whole string is shorter than a word
    for (size_t i = 0; i < n; ++i) v |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
    return v;
  }

  std::string_view s_;
  size_t done_ = 0;
  uint64_t state_ = 0x243f6a8885a308d3ULL;
};

uint64_t hash_name(std::string_view s) { return PrefixHasher(s).hash(s.size()); }

// The serialised groups of one resource type.
class Arena {
 public:
  // Appends the group of `name` and returns its offset.
  uint32_t add(std::string_view name, const std::vector<const Binding*>& deny,
               const std::vector<const Binding*>& allow) {
    uint32_t off = static_cast<uint32_t>(bytes_.size());
    put(GroupHeader{static_cast<uint32_t>(name.size()), static_cast<uint32_t>(deny.size()),
                    static_cast<uint32_t>(allow.size())});
    put_bytes(name);
    for (const auto* list : {&deny, &allow}) {
      for (const Binding* b : *list) {
        std::string_view principal = b->principal == "User:*" ? std::string_view{} : std::string_view(b->principal);
        std::string_view host = b->host == kWildcard ? std::string_view{} : std::string_view(b->host);
        put(RuleHeader{op_mask(b->operation, b->permission), static_cast<uint32_t>(principal.size()),
                       static_cast<uint32_t>(host.size())});
        bytes_.insert(bytes_.end(), principal.begin(), principal.end());
        put_bytes(host);
      }
    }
    return off;
  }
  const char* at(uint32_t off) const { return bytes_.data() + off; }
  void shrink() { bytes_.shrink_to_fit(); }

 private:
  template <typename T>
  void put(const T& v) {
    const char* p = reinterpret_cast<const char*>(&v);
    bytes_.insert(bytes_.end(), p, p + sizeof v);
  }
  void put_bytes(std::string_view s) {  // then pad to 4
    bytes_.insert(bytes_.end(), s.begin(), s.end());
    bytes_.resize(pad4(bytes_.size()), '\0');
  }
  std::vector<char> bytes_;
};

// An immutable open-addressing map from name to group, probed with a precomputed hash (so
// prefix lookups reuse PrefixHasher) and a string_view (so nothing is allocated). A slot
// keeps the hash's high half as a tag, so a probe rarely reads a group it doesn't want.
class NameMap {
 public:
  void build(const std::vector<std::pair<uint64_t, uint32_t>>& entries) {  // (hash, group offset)
    count_ = entries.size();
    size_t cap = std::bit_ceil(std::max<size_t>(8, count_ * 2));  // load <= 1/2
    slots_.assign(cap, Slot{0, kNone});
    mask_ = cap - 1;
    for (auto [h, off] : entries) {
      size_t at = h & mask_;
      while (slots_[at].off != kNone) at = (at + 1) & mask_;
      slots_[at] = Slot{static_cast<uint32_t>(h >> 32), off};
    }
  }

  // The group named `key` (whose hash is h), or nullptr.
  const char* find(const Arena& arena, std::string_view key, uint64_t h) const {
    if (count_ == 0) return nullptr;
    uint32_t tag = static_cast<uint32_t>(h >> 32);
    for (size_t at = h & mask_;; at = (at + 1) & mask_) {
      Slot s = slots_[at];
      if (s.off == kNone) return nullptr;
      if (s.tag != tag) continue;
      const char* g = arena.at(s.off);
      if (load<uint32_t>(g) == key.size() && same_bytes(g + sizeof(GroupHeader), key.data(), key.size()))
        return g;
    }
  }

  bool empty() const { return count_ == 0; }

 private:
  struct Slot {
    uint32_t tag;
    uint32_t off;  // kNone: free
  };
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t count_ = 0;
};

// The bindings of one resource type.
struct TypeIndex {
  Arena arena;
  NameMap literal;                     // LITERAL bindings by name, except "*"
  uint32_t wildcard = kNone;           // the group of LITERAL "*"
  NameMap prefixed;                    // PREFIXED bindings by prefix
  std::vector<size_t> prefix_lengths;  // the distinct prefix lengths, ascending
  bool empty() const { return literal.empty() && wildcard == kNone && prefixed.empty(); }
};

constexpr int kFirstType = static_cast<int>(ResourceType::topic);
constexpr int kLastType = static_cast<int>(ResourceType::user);

}  // namespace

struct Index::Impl {
  std::array<TypeIndex, kLastType + 1> types;  // by ResourceType code; ANY and UNKNOWN stay empty
  // The valid bindings again, by type, for authorize_any's scan (rare: InitProducerId).
  std::array<std::vector<Binding>, kLastType + 1> by_type;
  size_t size = 0;
};

Index::Index() : impl_(std::make_unique<Impl>()) {}
Index::~Index() = default;

Index::Index(const std::vector<Binding>& bindings) : impl_(std::make_unique<Impl>()) {
  // Group the bindings by resource pattern, viewing the callers' strings. Invalid bindings
  // are dropped: they could never have been created, and may not be well-formed enough to
  // index (an empty principal would read as "User:*").
  struct Group {
    std::vector<const Binding*> deny, allow;
  };
  using Groups = std::unordered_map<std::string_view, Group>;
  std::array<Groups, kLastType + 1> literal, prefixed;
  for (const Binding& b : bindings) {
    if (invalid_binding(b)) continue;
    auto& groups = b.pattern_type == PatternType::prefixed ? prefixed : literal;
    Group& g = groups[static_cast<int>(b.resource_type)][b.resource_name];
    (b.permission == Permission::deny ? g.deny : g.allow).push_back(&b);
    impl_->by_type[static_cast<int>(b.resource_type)].push_back(b);
    ++impl_->size;
  }

  std::vector<std::pair<uint64_t, uint32_t>> entries;
  for (int t = kFirstType; t <= kLastType; ++t) {
    TypeIndex& ti = impl_->types[t];
    entries.clear();
    for (const auto& [name, g] : literal[t]) {
      if (name == kWildcard)
        ti.wildcard = ti.arena.add(name, g.deny, g.allow);
      else
        entries.emplace_back(hash_name(name), ti.arena.add(name, g.deny, g.allow));
    }
    ti.literal.build(entries);

    entries.clear();
    for (const auto& [name, g] : prefixed[t]) {
      entries.emplace_back(hash_name(name), ti.arena.add(name, g.deny, g.allow));
      ti.prefix_lengths.push_back(name.size());
    }
    ti.prefixed.build(entries);
    ti.arena.shrink();
    std::sort(ti.prefix_lengths.begin(), ti.prefix_lengths.end());
    ti.prefix_lengths.erase(std::unique(ti.prefix_lengths.begin(), ti.prefix_lengths.end()), ti.prefix_lengths.end());
  }
}

size_t Index::size() const { return impl_->size; }

namespace {

// The state of one authorize() call as it visits the groups that apply to the resource.
// Pointer and size are kept apart rather than as string_views: copying a string_view
// parameter in became one 16-byte load of two 8-byte stores, which can't be forwarded.
struct Check {
  const char* principal;
  size_t principal_len;
  const char* host;
  size_t host_len;
  uint32_t op;
  bool applies = false;  // some binding applies to the resource
  bool allowed = false;

  // Whether the rule at `p` matches; moves p past it.
  bool next_matches(const char*& p) const {
    auto r = load<RuleHeader>(p);
    const char* text = p + sizeof(RuleHeader);
    p = text + pad4(r.principal_len + r.host_len);
    if (!(r.ops & op)) return false;
    if (r.principal_len != 0 && (r.principal_len != principal_len || !same_bytes(text, principal, principal_len)))
      return false;
    return r.host_len == 0 || (r.host_len == host_len && same_bytes(text + r.principal_len, host, host_len));
  }

  // False when a DENY in group `g` matches.
  bool visit(const char* g) {
    auto h = load<GroupHeader>(g);
    const char* p = g + sizeof(GroupHeader) + pad4(h.name_len);
    applies = true;
    for (uint32_t i = 0; i < h.denies; ++i)
      if (next_matches(p)) return false;
    for (uint32_t i = 0; i < h.allows && !allowed; ++i) allowed = next_matches(p);
    return true;
  }
};

}  // namespace

bool Index::authorize(const AuthorizerConfig& cfg, std::string_view principal, std::string_view host, Operation op,
                      ResourceType type, std::string_view resource_name) const {
  for (const std::string& su : cfg.super_users)
    if (su == principal) return true;

  // ANY, UNKNOWN and out-of-range codes name no real operation or resource: never granted.
  int op_code = static_cast<int>(op), type_code = static_cast<int>(type);
  if (op_code < static_cast<int>(Operation::all) || op_code > static_cast<int>(Operation::describe_tokens)) return false;
  if (type_code < kFirstType || type_code > kLastType) return false;

  const TypeIndex& ti = impl_->types[type_code];
  Check c{principal.data(), principal.size(), host.data(), host.size(), op_bit(op)};
  if (!ti.empty()) {
    PrefixHasher hasher(resource_name);
    for (size_t len : ti.prefix_lengths) {
      if (len > resource_name.size()) break;
      const char* g = ti.prefixed.find(ti.arena, resource_name.substr(0, len), hasher.hash(len));
      if (g && !c.visit(g)) return false;
    }
    if (!ti.literal.empty()) {
      const char* g = ti.literal.find(ti.arena, resource_name, hasher.hash(resource_name.size()));
      if (g && !c.visit(g)) return false;
    }
    if (ti.wildcard != kNone && !c.visit(ti.arena.at(ti.wildcard))) return false;
  }
  if (c.allowed) return true;
  return c.applies ? false : cfg.allow_everyone_if_no_acl_found;
}

bool Index::authorize_any(const AuthorizerConfig& cfg, std::string_view principal, std::string_view host, Operation op,
                          ResourceType type) const {
  for (const std::string& su : cfg.super_users)
    if (su == principal) return true;
  const int op_code = static_cast<int>(op), type_code = static_cast<int>(type);
  if (op_code < static_cast<int>(Operation::all) || op_code > static_cast<int>(Operation::describe_tokens)) return false;
  if (type_code < kFirstType || type_code > kLastType) return false;
  const auto& bindings = impl_->by_type[type_code];
  if (bindings.empty()) return cfg.allow_everyone_if_no_acl_found;
  auto applies = [&](const Binding& b) {
    return (b.principal == principal || b.principal == "User:*") && (b.host == host || b.host == kWildcard) &&
           (op_mask(b.operation, b.permission) & op_bit(op)) != 0;
  };
  for (const Binding& allow : bindings) {
    if (allow.permission != Permission::allow || !applies(allow)) continue;
    bool cancelled = false;
    for (const Binding& deny : bindings) {
      if (deny.permission != Permission::deny || !applies(deny)) continue;
      cancelled = (deny.pattern_type == PatternType::literal && deny.resource_name == kWildcard) ||
                  (deny.pattern_type == allow.pattern_type && deny.resource_name == allow.resource_name) ||
                  (deny.pattern_type == PatternType::prefixed &&
                   std::string_view(allow.resource_name).starts_with(deny.resource_name));
      if (cancelled) break;
    }
    if (!cancelled) return true;
  }
  return false;
}

}  // namespace brokerd::acl
