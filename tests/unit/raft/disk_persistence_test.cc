// The on-disk raft stores: log on the segment log, quorum-state file, snapshot files, and a
// single-voter RaftNode that runs over them across restarts.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>

#include "brokerd/raft/disk_io.h"
#include "brokerd/raft/disk_log.h"
#include "brokerd/raft/disk_quorum_state.h"
#include "brokerd/raft/disk_snapshot_store.h"
#include "brokerd/raft/memory_persistence.h"
#include "brokerd/raft/node.h"
#include "brokerd/storage/batch_builder.h"
#include "brokerd/storage/log.h"
#include "brokerd/storage/segment.h"

namespace brokerd::raft {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("brokerd-raft-disk-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::vector<Entry> make_entries(Offset from, const std::vector<Epoch>& epochs, bool control_first = false) {
  std::vector<Entry> es;
  for (size_t i = 0; i < epochs.size(); ++i) {
    const Offset o = from + static_cast<Offset>(i);
    es.push_back(Entry{o, epochs[i], control_first && i == 0, "payload-" + std::to_string(o)});
  }
  return es;
}

// The same operations on the memory log (the reference) and the disk log must agree.
void expect_same(const RaftLog& ref, const RaftLog& disk) {
  EXPECT_EQ(ref.start_offset(), disk.start_offset());
  EXPECT_EQ(ref.end_offset(), disk.end_offset());
  EXPECT_EQ(ref.last_epoch(), disk.last_epoch());
  EXPECT_EQ(ref.read(0, 1000), disk.read(0, 1000));
  for (Offset o = ref.start_offset() - 1; o <= ref.end_offset(); ++o) EXPECT_EQ(ref.epoch_at(o), disk.epoch_at(o)) << o;
  for (Epoch e = 0; e <= ref.last_epoch() + 1; ++e) {
    auto a = ref.end_offset_for_epoch(e), b = disk.end_offset_for_epoch(e);
    EXPECT_EQ(a.offset, b.offset) << "epoch " << e;
    EXPECT_EQ(a.epoch, b.epoch) << "epoch " << e;
  }
}

fs::path only_segment(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".log") return e.path();
  return {};
}

TEST(DiskRaftLog, AppendReadAndEpochsMatchTheMemoryLog) {
  TempDir dir;
  auto disk = DiskRaftLog::open(dir.path());
  MemoryRaftLog ref;
  auto es = make_entries(0, {1, 1, 1, 2, 2, 4, 4, 4, 4}, true);
  ref.append(es);
  disk->append(es);
  expect_same(ref, *disk);
  EXPECT_EQ(disk->read(3, 2), (std::vector<Entry>{es[3], es[4]}));
  EXPECT_TRUE(disk->read(0, 1)[0].control);
  const auto cache = disk->epoch_cache();
  EXPECT_EQ(cache, (std::vector<DiskRaftLog::EpochStart>{{1, 0}, {2, 3}, {4, 5}}));

  // Appended one by one, as a leader does: offsets still line up with the storage log.
  for (int i = 0; i < 5; ++i) {
    auto one = make_entries(ref.end_offset(), {5});
    ref.append(one);
    disk->append(one);
  }
  expect_same(ref, *disk);
  EXPECT_THROW(disk->append(make_entries(3, {5})), std::logic_error);
  EXPECT_THROW(disk->append(make_entries(disk->end_offset(), {3})), std::logic_error);
}

TEST(DiskRaftLog, ReopenRestoresEntriesAndEpochCache) {
  TempDir dir;
  std::vector<Entry> es = make_entries(0, {1, 1, 2, 3, 3, 3});
  {
    auto disk = DiskRaftLog::open(dir.path());
    disk->append(es);
    disk->flush(disk->end_offset());
    EXPECT_EQ(disk->flushed_end_offset(), 6);
  }
  auto disk = DiskRaftLog::open(dir.path());
  MemoryRaftLog ref;
  ref.append(es);
  expect_same(ref, *disk);
  EXPECT_EQ(disk->flushed_end_offset(), 6);
  EXPECT_EQ(disk->epoch_cache().size(), 3u);
}

TEST(DiskRaftLog, FlushBarrierTracksAppendsAndTruncation) {
  TempDir dir;
  auto disk = DiskRaftLog::open(dir.path());
  disk->append(make_entries(0, {1, 1, 1}));
  EXPECT_EQ(disk->flushed_end_offset(), 0);
  disk->flush(2);  // flushing more than asked is allowed
  EXPECT_GE(disk->flushed_end_offset(), 2);
  disk->append(make_entries(3, {1, 1}));
  EXPECT_EQ(disk->flushed_end_offset(), 3);
  disk->truncate_to(1);
  EXPECT_EQ(disk->flushed_end_offset(), 1);
}

// Test builds simulate a power loss: the next open keeps only what a real fsync covered.
void lose_power(const fs::path& dir) { std::ofstream(dir / DiskRaftLog::kPowerLossFile) << "\n"; }

DiskRaftLogOptions tracking(bool skip_fsync = false) {
  DiskRaftLogOptions o;
  o.track_durable_end = true;
  o.skip_fsync = skip_fsync;
  return o;
}

TEST(DiskRaftLog, ASimulatedPowerLossKeepsOnlyWhatWasSynced) {
  TempDir dir;
  const auto o = tracking();
  {
    auto disk = DiskRaftLog::open(dir.path(), o);
    disk->append(make_entries(0, {1, 1, 1}));
    disk->flush(3);
    disk->append(make_entries(3, {2, 2}));  // written, never synced
  }
  lose_power(dir.path());
  {
    auto disk = DiskRaftLog::open(dir.path(), o);
    EXPECT_EQ(disk->end_offset(), 3);
    EXPECT_EQ(disk->last_epoch(), 1);
    EXPECT_FALSE(fs::exists(dir.path() / DiskRaftLog::kPowerLossFile));
    // A truncation lowers what is on the disk; entries appended after it are not synced.
    disk->truncate_to(2);
    disk->append(make_entries(2, {3, 3}));
  }
  lose_power(dir.path());
  auto disk = DiskRaftLog::open(dir.path(), o);
  EXPECT_EQ(disk->end_offset(), 2);
  EXPECT_EQ(disk->last_epoch(), 1);
}

TEST(DiskRaftLog, WithoutAPowerLossAKillLosesNothing) {
  TempDir dir;
  const auto o = tracking();
  {
    auto disk = DiskRaftLog::open(dir.path(), o);
    disk->append(make_entries(0, {1, 1, 1}));
  }
  auto disk = DiskRaftLog::open(dir.path(), o);
  EXPECT_EQ(disk->end_offset(), 3);
}

TEST(DiskRaftLog, TheInjectedMissingFsyncLosesFlushedEntriesToAPowerLoss) {
  TempDir dir;
  const auto o = tracking(/*skip_fsync=*/true);
  {
    auto disk = DiskRaftLog::open(dir.path(), o);
    disk->append(make_entries(0, {1, 1, 1}));
    disk->flush(3);
    EXPECT_EQ(disk->flushed_end_offset(), 3);  // the lie the bug tells
  }
  lose_power(dir.path());
  auto disk = DiskRaftLog::open(dir.path(), o);
  EXPECT_EQ(disk->end_offset(), 0);
}

TEST(DiskRaftLog, TruncateAtBatchBoundariesAndInsideBatches) {
  TempDir dir;
  MemoryRaftLog ref;
  auto es = make_entries(0, {1, 1, 1, 1, 2, 2, 2, 3, 3, 3});  // batches [0,4) [4,7) [7,10)
  {
    auto disk = DiskRaftLog::open(dir.path());
    ref.append(es);
    disk->append(es);
    ref.truncate_to(7);  // a batch boundary
    disk->truncate_to(7);
    expect_same(ref, *disk);
    ref.truncate_to(5);  // inside the epoch-2 batch
    disk->truncate_to(5);
    expect_same(ref, *disk);
    EXPECT_FALSE(fs::exists(dir.path() / DiskRaftLog::kPendingFile));
    auto more = make_entries(5, {4, 4});
    ref.append(more);
    disk->append(more);
    expect_same(ref, *disk);
  }
  auto disk = DiskRaftLog::open(dir.path());
  expect_same(ref, *disk);
}

TEST(DiskRaftLog, InterruptedTruncationIsFinishedAtOpen) {
  TempDir dir;
  auto es = make_entries(0, {1, 1, 1, 1, 2, 2, 2});
  {
    auto disk = DiskRaftLog::open(dir.path());
    disk->append(es);
    disk->flush(7);
  }
  // A crash during truncate_to(5): the prefix of the cut batch (offset 4, epoch 2) was saved
  // aside, and the batch may or may not have been cut yet. Open finishes the job.
  storage::BatchOptions opts;
  opts.base_offset = 4;
  opts.partition_leader_epoch = 2;
  storage::BatchBuilder keep(opts);
  keep.add(1000, std::nullopt, storage::as_bytes(es[4].payload));
  const Bytes kept = keep.build();
  write_file_durably(dir.path() / DiskRaftLog::kPendingFile,
                     std::string_view(reinterpret_cast<const char*>(kept.data()), kept.size()));
  {
    auto disk = DiskRaftLog::open(dir.path());  // finishes the pending truncation
    MemoryRaftLog ref;
    ref.append(es);
    ref.truncate_to(5);
    expect_same(ref, *disk);
    EXPECT_FALSE(fs::exists(dir.path() / DiskRaftLog::kPendingFile));
    disk->append(make_entries(5, {2, 2}));
  }
  // The same crash after the batch was cut (offsets 4.. gone) but before the prefix came back.
  write_file_durably(dir.path() / DiskRaftLog::kPendingFile,
                     std::string_view(reinterpret_cast<const char*>(kept.data()), kept.size()));
  storage::Log::open(dir.path(), storage::LogConfig{}, false)->truncate_to(4);
  auto disk = DiskRaftLog::open(dir.path());
  MemoryRaftLog ref;
  ref.append(es);
  ref.truncate_to(5);
  expect_same(ref, *disk);
}

TEST(DiskRaftLog, TornTailIsCutAtOpenAndThePrefixSurvives) {
  TempDir dir;
  std::vector<Entry> es;
  {
    auto disk = DiskRaftLog::open(dir.path());
    for (int i = 0; i < 4; ++i) {  // four batches of two entries
      auto two = make_entries(disk->end_offset(), {1, 1});
      disk->append(two);
      es.insert(es.end(), two.begin(), two.end());
    }
    disk->flush(disk->end_offset());
  }
  // A crash in the middle of writing the last batch: its tail never reached the disk.
  const fs::path seg = only_segment(dir.path());
  fs::resize_file(seg, fs::file_size(seg) - 7);
  {
    auto disk = DiskRaftLog::open(dir.path());
    EXPECT_EQ(disk->end_offset(), 6);
    EXPECT_EQ(disk->read(0, 100), std::vector<Entry>(es.begin(), es.begin() + 6));
    // Garbage after the last whole batch is cut as well.
    disk->append(make_entries(6, {2}));
    disk->close();
  }
  {
    std::ofstream out(seg, std::ios::binary | std::ios::app);
    out << std::string(100, '\x5a');
  }
  auto disk = DiskRaftLog::open(dir.path());
  EXPECT_EQ(disk->end_offset(), 7);
  EXPECT_EQ(disk->last_epoch(), 2);
  EXPECT_EQ(disk->read(6, 1)[0].payload, "payload-6");
}

TEST(DiskRaftLog, PrefixTruncationAfterASnapshotMovesTheStartAndDeletesSegments) {
  TempDir dir;
  DiskRaftLogOptions small;
  small.segment_bytes = 200;  // one batch per segment
  MemoryRaftLog ref;
  {
    auto disk = DiskRaftLog::open(dir.path(), small);
    for (Epoch e = 1; e <= 5; ++e) {
      auto es = make_entries(disk->end_offset(), {e, e, e, e});
      ref.append(es);
      disk->append(es);
    }
    disk->flush(disk->end_offset());
    const size_t before = disk->storage_log().segment_count();
    ASSERT_EQ(before, 5u);
    ref.truncate_prefix({10, 3});
    disk->truncate_prefix({10, 3});
    expect_same(ref, *disk);
    EXPECT_EQ(disk->storage_log().segment_count(), before - 2);  // [0,4) and [4,8) gone
    EXPECT_EQ(disk->storage_log().log_start_offset(), 10);
    EXPECT_EQ(disk->epoch_at(9), 3);
    EXPECT_EQ(disk->end_offset_for_epoch(2).offset, -1);
    // A divergence truncation down to the start keeps the start.
    ref.truncate_to(10);
    disk->truncate_to(10);
    expect_same(ref, *disk);
    auto es = make_entries(10, {6, 6, 6});
    ref.append(es);
    disk->append(es);
  }
  auto disk = DiskRaftLog::open(dir.path(), small);
  expect_same(ref, *disk);
}

TEST(DiskRaftLog, ResetRestartsTheLogAfterAnInstalledSnapshot) {
  TempDir dir;
  MemoryRaftLog ref;
  {
    auto disk = DiskRaftLog::open(dir.path());
    auto es = make_entries(0, {1, 1, 2});
    ref.append(es);
    disk->append(es);
    ref.reset({50, 7});
    disk->reset({50, 7});
    expect_same(ref, *disk);
    auto more = make_entries(50, {8, 8});
    ref.append(more);
    disk->append(more);
    disk->flush(52);
    // truncate_prefix past the end is a reset too.
    ref.truncate_prefix({60, 9});
    disk->truncate_prefix({60, 9});
    expect_same(ref, *disk);
    auto last = make_entries(60, {9});
    ref.append(last);
    disk->append(last);
  }
  auto disk = DiskRaftLog::open(dir.path());
  expect_same(ref, *disk);
  EXPECT_EQ(disk->epoch_at(59), 9);
}

TEST(DiskRaftLog, InterruptedResetIsFinishedAtOpen) {
  TempDir dir;
  {
    auto disk = DiskRaftLog::open(dir.path());
    disk->append(make_entries(0, {1, 1, 1}));
  }
  // A crash after the reset was recorded but before the old segments were removed.
  write_file_durably(dir.path() / DiskRaftLog::kStartFile, "1 2 1 1\n");
  auto disk = DiskRaftLog::open(dir.path());
  EXPECT_EQ(disk->start_offset(), 2);
  EXPECT_EQ(disk->end_offset(), 2);
  EXPECT_EQ(disk->last_epoch(), 1);
  EXPECT_TRUE(disk->read(0, 10).empty());
}

TEST(DiskQuorumStateStore, RoundTripsAndSurvivesReopen) {
  TempDir dir;
  {
    DiskQuorumStateStore store(dir.path(), {1, 2, 3});
    EXPECT_EQ(store.read(), std::nullopt);
    store.write({4, 2, kNoReplica});
    store.write({5, 1, 1});
    EXPECT_EQ(store.read(), (QuorumStateData{5, 1, 1}));
  }
  DiskQuorumStateStore store(dir.path());
  EXPECT_EQ(store.read(), (QuorumStateData{5, 1, 1}));
  EXPECT_EQ(store.recorded_voters(), (std::vector<ReplicaId>{1, 2, 3}));
  EXPECT_FALSE(fs::exists(dir.path() / "quorum-state.tmp"));
  const std::string text = *read_whole_file(store.path());
  EXPECT_NE(text.find("\"leaderEpoch\":5"), std::string::npos);
  EXPECT_NE(text.find("\"votedId\":1"), std::string::npos);

  write_file_durably(store.path(), "{\"leaderId\":");
  EXPECT_THROW(store.read(), std::runtime_error);
}

TEST(DiskSnapshotStore, NamesSavesAndReadsSnapshots) {
  EXPECT_EQ(DiskSnapshotStore::file_name({42, 3}), "00000000000000000042-0000000003.checkpoint");
  EXPECT_EQ(DiskSnapshotStore::parse_file_name("00000000000000000042-0000000003.checkpoint"),
            (OffsetAndEpoch{42, 3}));
  EXPECT_EQ(DiskSnapshotStore::parse_file_name("00000000000000000042-0000000003.checkpoint.part"), std::nullopt);
  TempDir dir;
  {
    DiskSnapshotStore store(dir.path());
    EXPECT_EQ(store.latest(), std::nullopt);
    store.save({{10, 1}, "ten"});
    store.save({{5, 1}, "older: ignored"});
    EXPECT_EQ(store.latest()->data, "ten");
    store.save({{20, 2}, std::string("twenty\0bytes", 12)});
    EXPECT_EQ(store.list(), (std::vector<OffsetAndEpoch>{{20, 2}}));  // older ones deleted
  }
  DiskSnapshotStore store(dir.path());
  auto s = store.latest();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->id, (OffsetAndEpoch{20, 2}));
  EXPECT_EQ(s->data, std::string("twenty\0bytes", 12));
}

TEST(DiskSnapshotStore, HalfWrittenSnapshotIsIgnoredAndRemovedAtOpen) {
  TempDir dir;
  {
    DiskSnapshotStore store(dir.path());
    store.save({{10, 1}, "ten"});
  }
  const fs::path part = dir.path() / (DiskSnapshotStore::file_name({30, 2}) + ".part");
  {
    std::ofstream out(part, std::ios::binary);
    out << "BRKDSNAP half";
  }
  DiskSnapshotStore store(dir.path());
  EXPECT_EQ(store.latest()->id, (OffsetAndEpoch{10, 1}));
  EXPECT_FALSE(fs::exists(part));
}

TEST(DiskSnapshotStore, CorruptSnapshotIsReported) {
  TempDir dir;
  {
    DiskSnapshotStore store(dir.path());
    store.save({{10, 1}, "some state"});
  }
  const fs::path file = dir.path() / DiskSnapshotStore::file_name({10, 1});
  {
    std::fstream f(file, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(-2, std::ios::end);
    f << "XX";
  }
  DiskSnapshotStore store(dir.path());
  EXPECT_THROW(store.latest(), std::runtime_error);
}

// A single-voter quorum over the disk stores, driven as the caller in brokerd will: ticks,
// flushes when asked, applies what is committed.
struct DiskNode {
  fs::path dir;
  std::unique_ptr<DiskRaftLog> log;
  std::unique_ptr<DiskQuorumStateStore> quorum_state;
  std::unique_ptr<DiskSnapshotStore> snapshots;
  std::unique_ptr<RaftNode> node;
  std::vector<Entry> applied;
  std::optional<Snapshot> loaded;
  int64_t now = 0;

  explicit DiskNode(fs::path d) : dir(std::move(d)) { start(); }

  void start() {
    log = DiskRaftLog::open(dir / "__cluster_metadata-0");
    quorum_state = std::make_unique<DiskQuorumStateStore>(dir / "__cluster_metadata-0", std::vector<ReplicaId>{1});
    snapshots = std::make_unique<DiskSnapshotStore>(dir / "__cluster_metadata-0");
    RaftConfig config;
    config.node_id = 1;
    config.voters = {1};
    config.random_seed = 11;
    node = std::make_unique<RaftNode>(config, *log, *quorum_state, *snapshots);
    applied.clear();
    loaded.reset();
    node->start(now);
    drain();
  }
  void stop() {
    node.reset();
    log->close();
  }
  void drain() {
    for (int guard = 0; guard < 100; ++guard) {
      RaftOutput o = node->take_output();
      if (o.load_snapshot) {
        loaded = o.load_snapshot;
        applied.clear();
      }
      for (auto& e : o.committed) applied.push_back(std::move(e));
      if (!o.flush_up_to) return;
      log->flush(*o.flush_up_to);
      node->on_log_flushed(now);
    }
  }
  void run_for(int64_t ms) {
    for (int64_t end = now + ms; now < end; now += 10) {
      node->tick(now);
      drain();
    }
  }
  std::vector<std::string> applied_payloads() const {
    std::vector<std::string> out;
    for (const auto& e : applied)
      if (!e.control) out.push_back(e.payload);
    return out;
  }
};

TEST(DiskRaftNode, SingleVoterElectsCommitsAndKeepsEntriesAcrossRestarts) {
  TempDir dir;
  DiskNode n(dir.path());
  n.run_for(5000);
  ASSERT_EQ(n.node->role(), Role::leader);
  const Epoch first_epoch = n.node->epoch();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(n.node->propose("entry-" + std::to_string(i), n.now));
  n.drain();
  n.run_for(100);
  EXPECT_EQ(n.applied_payloads(), (std::vector<std::string>{"entry-0", "entry-1", "entry-2", "entry-3", "entry-4"}));
  const Offset hw = n.node->high_watermark();
  EXPECT_EQ(hw, n.log->end_offset());

  n.stop();
  n.start();
  // The only voter leads a new epoch as it starts, without an election timeout.
  ASSERT_EQ(n.node->role(), Role::leader);
  EXPECT_EQ(n.quorum_state->read()->epoch, first_epoch + 1);
  EXPECT_GT(n.node->epoch(), first_epoch);
  ASSERT_TRUE(n.node->propose("entry-5", n.now));
  n.drain();
  n.run_for(100);
  EXPECT_EQ(n.applied_payloads(),
            (std::vector<std::string>{"entry-0", "entry-1", "entry-2", "entry-3", "entry-4", "entry-5"}));
  EXPECT_EQ(n.log->read(0, 100).size(), static_cast<size_t>(n.log->end_offset()));

  // A snapshot cuts the log; the next restart loads it and replays only what follows.
  const Offset snap_at = n.node->applied_offset();
  ASSERT_TRUE(n.node->take_snapshot(snap_at, "state@" + std::to_string(snap_at)));
  EXPECT_EQ(n.log->start_offset(), snap_at);
  ASSERT_TRUE(n.node->propose("entry-6", n.now));
  n.drain();
  n.run_for(100);
  n.stop();
  n.start();
  ASSERT_TRUE(n.loaded);
  EXPECT_EQ(n.loaded->data, "state@" + std::to_string(snap_at));
  n.run_for(5000);
  ASSERT_EQ(n.node->role(), Role::leader);
  EXPECT_EQ(n.applied_payloads(), (std::vector<std::string>{"entry-6"}));
}

}  // namespace
}  // namespace brokerd::raft
