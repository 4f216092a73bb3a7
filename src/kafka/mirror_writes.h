#pragma once
// Mirror topics are read-only until their link promotes them: the source owns their records,
// partitions and copied configs, and a local write would make the mirror differ from the
// source (a DeleteRecords would move the mirror's log start past records the source still
// has). Every handler that writes to a topic asks here first.
#include <optional>
#include <string>
#include <string_view>

#include "brokerd/protocol/error_code.h"

namespace brokerd::kafka {

struct MirrorWriteRefusal {
  protocol::ErrorCode error = protocol::ErrorCode::invalid_request;
  std::string message;
};

// The answer to a client's write to `topic`, a mirror of `link` (empty: not a mirror), or
// nullopt when the write may go ahead.
std::optional<MirrorWriteRefusal> refuse_mirror_write(std::string_view topic, std::string_view link);

}  // namespace brokerd::kafka
