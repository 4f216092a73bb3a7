#pragma once
// The replication rules' deliberate defects by name: repl-sim injects them to prove its
// checker catches them, and a broker built with BROKERD_INJECT_BUGS takes them from its
// inject.bug setting so the fault campaign can prove the same on real clusters.
#include <optional>
#include <span>
#include <string_view>

#include "brokerd/replication/types.h"

namespace brokerd::replication {

struct BugInfo {
  const char* name;
  Bug bug;
  const char* what;
};

std::span<const BugInfo> known_bugs();
std::optional<Bug> bug_named(std::string_view name);

}  // namespace brokerd::replication
