// repl-sim: runs the deterministic simulation of a replicated partition over a range of seeds.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "brokerd/replication/bugs.h"
#include "sim_cluster.h"

using namespace brokerd::replication;
using namespace brokerd::replication::sim;

namespace {

void usage() {
  std::fprintf(stderr,
               "usage: repl-sim [--nodes N] (--seeds A-B | --seed S) [--duration-ms MS] [--trace]\n"
               "                [--inject-bug NAME] [--expect-violation] [--list-bugs]\n");
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
    try {
      if (a == "--nodes") {
        opt.nodes = std::stoi(value());
      } else if (a == "--duration-ms") {
        opt.duration_ms = std::stoll(value());
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
        for (const auto& b : known_bugs()) std::printf("%-22s %s\n", b.name, b.what);
        return 0;
      } else if (a == "--inject-bug") {
        const std::string name = value();
        bool found = false;
        for (const auto& b : known_bugs()) {
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
    } catch (const std::exception&) {
      usage();
      return 2;
    }
  }
  if (opt.nodes < 2 || opt.nodes > 9 || opt.duration_ms <= 0 || first > last) {
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
      std::printf("VIOLATION seed=%llu: %s\n", static_cast<unsigned long long>(seed), cluster.violation().c_str());
      if (!opt.trace) {
        std::printf("last events:\n");
        for (const auto& l : cluster.trace_tail()) std::printf("  %s\n", l.c_str());
      }
      std::string bugs;
      for (const auto& b : known_bugs())
        if (opt.bugs & static_cast<uint32_t>(b.bug)) bugs += std::string(" --inject-bug ") + b.name;
      std::printf("replay: repl-sim --nodes %d --duration-ms %lld --seed %llu --trace%s\n", opt.nodes,
                  static_cast<long long>(opt.duration_ms), static_cast<unsigned long long>(seed), bugs.c_str());
      if (expect_violation) {
        std::printf("caught after %llu seeds\n", static_cast<unsigned long long>(seeds));
        return 0;
      }
      return 1;
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf(
      "ok: %llu seeds, %d replicas, %lld events, %lld writes acknowledged, %lld offsets committed, "
      "%lld crashes, %lld leader changes, %lld truncations; %.2f s wall\n",
      static_cast<unsigned long long>(seeds), opt.nodes, static_cast<long long>(total.events),
      static_cast<long long>(total.acked), static_cast<long long>(total.committed),
      static_cast<long long>(total.crashes), static_cast<long long>(total.leader_changes),
      static_cast<long long>(total.truncations), secs);
  if (expect_violation) {
    std::printf("expected a violation, none found in %llu seeds\n", static_cast<unsigned long long>(seeds));
    return 1;
  }
  return 0;
}
