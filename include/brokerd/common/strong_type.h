#pragma once
// A value wrapped in a distinct type, so an epoch cannot be passed where an offset is expected.
#include <compare>
#include <cstdint>
#include <functional>

namespace brokerd {

template <typename T, typename Tag>
class StrongType {
 public:
  using value_type = T;
  constexpr StrongType() = default;
  constexpr explicit StrongType(T v) : value_(v) {}
  constexpr T value() const { return value_; }
  constexpr T operator()() const { return value_; }
  constexpr auto operator<=>(const StrongType&) const = default;

 private:
  T value_{};
};

using NodeId = StrongType<int32_t, struct NodeIdTag>;
using PartitionId = StrongType<int32_t, struct PartitionIdTag>;
using LeaderEpoch = StrongType<int32_t, struct LeaderEpochTag>;

}  // namespace brokerd

template <typename T, typename Tag>
struct std::hash<brokerd::StrongType<T, Tag>> {
  size_t operator()(const brokerd::StrongType<T, Tag>& v) const noexcept { return std::hash<T>{}(v.value()); }
};
