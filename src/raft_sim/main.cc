// raft-sim: runs the deterministic cluster simulation over a range of seeds.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "sim_cluster.h"

using namespace brokerd::raft;
using namespace brokerd::raft::sim;

namespace {

struct BugInfo {
  const char* name;
  Bug bug;
  const char* what;
};

constexpr BugInfo kBugs[] = {
    {"vote-without-log-check", Bug::vote_without_log_check,
     "grant votes without checking that the candidate's log is up to date"},
    {"commit-old-epoch", Bug::commit_old_epoch,
     "advance the high watermark by counting replicas of entries from an older epoch"},
    {"forget-vote-on-restart", Bug::forget_vote_on_restart,
     "lose the voted-for of the current epoch when restarting"},
    {"hw-past-majority", Bug::hw_past_majority,
     "advance the high watermark past what a majority of voters has"},
    {"fetch-before-flush", Bug::fetch_before_flush,
     "followers report entries to the leader before flushing them"},
    {"skip-divergence-check", Bug::skip_divergence_check,
     "the leader serves a fetch without checking the fetcher's last epoch"},
    {"follow-lost-leader", Bug::follow_lost_leader,
     "a prospective voter follows again the dead leader that a pre-vote rejection names (livelock)"},
};

void usage() {
  std::fprintf(stderr,
               "usage: raft-sim [--nodes N] [--observers M] (--seeds A-B | --seed S) [--steps K]\n"
               "                [--trace] [--inject-bug NAME] [--expect-violation] [--list-bugs]\n");
}

}  // namespace

int main(int argc, char** argv) {
  SimOptions opt;
  uint64_t first = 1, last = 100;
  bool expect_violation = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        usage();
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--nodes") {
      opt.voters = std::stoi(value());
    } else if (a == "--observers") {
      opt.observers = std::stoi(value());
    } else if (a == "--steps") {
      opt.steps = std::stoll(value());
    } else if (a == "--seeds") {
      const std::string r = value();
      const auto dash = r.find('-');
      first = std::stoull(r.substr(0, dash));
      last = dash == std::string::npos ? first : std::stoull(r.substr(dash + 1));
    } else if (a == "--seed") {
      first = last = std::stoull(value());
    } else if (a == "--trace") {
      opt.trace = true;
    } else if (a == "--expect-violation") {
      expect_violation = true;
    } else if (a == "--list-bugs") {
      for (const auto& b : kBugs) std::printf("%-24s %s\n", b.name, b.what);
      return 0;
    } else if (a == "--inject-bug") {
      const std::string name = value();
      bool found = false;
      for (const auto& b : kBugs) {
        if (name == b.name) {
          opt.bugs |= static_cast<uint32_t>(b.bug);
          found = true;
        }
      }
      if (!found) {
        std::fprintf(stderr, "unknown bug '%s' (see --list-bugs)\n", name.c_str());
        return 2;
      }
    } else {
      usage();
      return 2;
    }
  }
  if (opt.voters < 1 || opt.observers < 0 || first > last) {
    usage();
    return 2;
  }

  SimStats total;
  const auto started = std::chrono::steady_clock::now();
  uint64_t seeds = 0;
  for (uint64_t seed = first; seed <= last; ++seed) {
    SimCluster cluster(seed, opt);
    const bool ok = cluster.run();
    ++seeds;
    total.add(cluster.stats());
    if (!ok) {
      std::printf("VIOLATION seed=%llu after %lld steps, t=%lld ms: %s\n",
                  static_cast<unsigned long long>(seed),
                  static_cast<long long>(cluster.stats().steps),
                  static_cast<long long>(cluster.stats().sim_time_ms), cluster.violation().c_str());
      if (!opt.trace) {
        std::printf("last events:\n");
        for (const auto& l : cluster.trace_tail()) std::printf("  %s\n", l.c_str());
      }
      std::string bugs;
      for (const auto& b : kBugs)
        if (opt.bugs & static_cast<uint32_t>(b.bug)) bugs += std::string(" --inject-bug ") + b.name;
      std::printf("replay: raft-sim --nodes %d --observers %d --steps %lld --seed %llu --trace%s\n",
                  opt.voters, opt.observers, static_cast<long long>(opt.steps),
                  static_cast<unsigned long long>(seed), bugs.c_str());
      if (expect_violation) {
        std::printf("caught after %llu seeds\n", static_cast<unsigned long long>(seeds));
        return 0;
      }
      return 1;
    }
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf(
      "ok: %llu seeds, %d voters + %d observers, %lld steps, %.1f s simulated, %lld elections, "
      "%lld entries committed, %lld proposals acknowledged, %lld messages, %lld crashes, "
      "%lld snapshots installed, slowest recovery after heal %lld ms; %.2f s wall, %.0f steps/s\n",
      static_cast<unsigned long long>(seeds), opt.voters, opt.observers,
      static_cast<long long>(total.steps), total.sim_time_ms / 1000.0,
      static_cast<long long>(total.elections), static_cast<long long>(total.committed),
      static_cast<long long>(total.acked), static_cast<long long>(total.messages),
      static_cast<long long>(total.crashes), static_cast<long long>(total.snapshots_installed),
      static_cast<long long>(total.heal_ms), secs, total.steps / (secs > 0 ? secs : 1));
  if (expect_violation) {
    std::printf("expected a violation, none found in %llu seeds\n",
                static_cast<unsigned long long>(seeds));
    return 1;
  }
  return 0;
}
