#pragma once
// The descriptors partition logs may hold at once, node-wide (log.open.files.max). Segment
// files take one each from the budget; when it is spent, opening another fails with EMFILE
// and the partition goes offline, while the descriptors outside the budget keep serving
// connections, the metadata log and everything else.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>

#include "brokerd/common/bytes.h"

namespace brokerd::storage {

// Sets the budget; 0 means no limit (the default, for tools and tests).
void set_open_files_budget(int64_t max);
int64_t open_files_budget();
// Descriptors held now by segment files.
int64_t open_files_in_use();

// The budget a node takes when log.open.files.max is 0: its RLIMIT_NOFILE minus a reserve
// for everything else (a quarter, at least min(1024, half)).
int64_t derived_open_files_budget(int64_t rlimit_nofile);

// How this thread frees descriptors when the budget is spent: it releases the files of some of
// its least recently used logs (Log::release_files) and says whether it released any. Each
// thread that owns logs installs its own (a reactor for the partitions it is home to), since
// only the owner thread may touch a log. Empty: none.
using Evictor = std::function<bool()>;
void set_thread_evictor(Evictor fn);

// How far past the budget an open may go when the evictor could not free a descriptor at once
// (they may be held by responses being sent, by syncs, or by another shard's logs):
// max(budget / 8, 8). Past budget + margin, opens fail with EMFILE.
int64_t open_files_margin(int64_t budget);
// True while more descriptors are held than the budget: each shard then releases some of its
// least recently used logs every tick until it is not.
bool over_open_files_budget();

// Opens `path` with `flags` (and mode 0644) as a budgeted descriptor, released when the last
// holder of the handle lets go. When the budget is spent it asks this thread's evictor once,
// then takes from the margin. Throws std::system_error (EMFILE when budget and margin are
// spent, or open's errno).
// Unbudgeted (`budgeted` false), a plain descriptor with the same errors.
std::shared_ptr<const FileHandle> open_segment_file(const std::filesystem::path& path, int flags, bool budgeted);

}  // namespace brokerd::storage
