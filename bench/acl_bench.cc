// ACL checks on the produce path against 10,000 bindings: 500 teams, each with literal
// topic ALLOWs, prefixed ALLOWs of several lengths under "team-NNN.", consumer group
// bindings, a few DENYs and a wildcard. Each benchmark rotates over 1,024 (principal,
// topic) pairs of different teams so the lookups don't all hit one warm bucket.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>
#include <vector>

#include "brokerd/acl/authorizer.h"

namespace {

using namespace brokerd::acl;
constexpr int kTeams = 500;
constexpr const char* kHost = "10.1.2.3";

std::string team(int t) {  // "team-042"
  std::string n = std::to_string(t);
  return "team-" + std::string(3 - std::min<size_t>(3, n.size()), '0') + n;
}

Binding make(ResourceType type, std::string name, PatternType pattern, std::string principal, Operation op,
             Permission perm = Permission::allow) {
  Binding b;
  b.resource_type = type;
  b.resource_name = std::move(name);
  b.pattern_type = pattern;
  b.principal = std::move(principal);
  b.host = "*";
  b.operation = op;
  b.permission = perm;
  return b;
}

// The literal topics of team t are "app.team-NNN.tKK"; its prefixes are "team-NNN." plus
// five longer ones (so a lookup probes six distinct prefix lengths).
const char* const kSubPrefixes[] = {"events.", "metrics.", "logs.", "audit.", "tmp-"};

std::vector<Binding> bindings() {
  std::vector<Binding> bs;
  bs.reserve(10'000);
  for (int t = 0; t < kTeams; ++t) {
    std::string p = "User:" + team(t);
    // 12 literal topic ALLOWs: 6 topics, WRITE for the team and READ for its reader.
    for (int k = 0; k < 6; ++k) {
      std::string topic = "app." + team(t) + ".t" + std::to_string(k);
      bs.push_back(make(ResourceType::topic, topic, PatternType::literal, p, Operation::write));
      bs.push_back(make(ResourceType::topic, topic, PatternType::literal, p + "-reader", Operation::read));
    }
    // 6 prefixed ALLOWs.
    bs.push_back(make(ResourceType::topic, team(t) + ".", PatternType::prefixed, p + "-reader", Operation::read));
    for (const char* sub : kSubPrefixes)
      bs.push_back(make(ResourceType::topic, team(t) + "." + sub, PatternType::prefixed, p, Operation::write));
    // 2 group bindings.
    bs.push_back(make(ResourceType::group, team(t) + "-consumers", PatternType::literal, p + "-reader", Operation::read));
    bs.push_back(make(ResourceType::group, team(t) + "-", PatternType::prefixed, p, Operation::read));
  }
  // A few DENYs and wildcards.
  for (int t = 0; t < kTeams; t += 50)
    bs.push_back(make(ResourceType::topic, team(t) + ".audit.", PatternType::prefixed, "User:" + team(t),
                      Operation::write, Permission::deny));
  bs.push_back(make(ResourceType::topic, "*", PatternType::literal, "User:intruder", Operation::all, Permission::deny));
  bs.push_back(make(ResourceType::topic, "*", PatternType::literal, "User:monitor", Operation::describe));
  bs.push_back(make(ResourceType::cluster, "kafka-cluster", PatternType::literal, "User:*", Operation::idempotent_write));
  return bs;
}

struct Query {
  std::string principal;
  std::string topic;
};

// 1,024 queries spread over the teams; `pick(t, k)` builds one.
template <typename F>
std::vector<Query> queries(F pick) {
  std::vector<Query> qs;
  for (int i = 0; i < 1024; ++i) qs.push_back(pick((i * 37) % kTeams, i % 6));
  return qs;
}

void run(benchmark::State& state, const std::vector<Query>& qs, bool expect) {
  static const std::vector<Binding> bs = bindings();
  static const Index index(bs);
  AuthorizerConfig cfg;
  cfg.super_users = {"User:admin", "User:controller"};
  size_t i = 0;
  for (auto _ : state) {
    const Query& q = qs[i++ & 1023];
    bool ok = index.authorize(cfg, q.principal, kHost, Operation::write, ResourceType::topic, q.topic);
    if (ok != expect) state.SkipWithError("unexpected answer");
    benchmark::DoNotOptimize(ok);
  }
  state.counters["bindings"] = static_cast<double>(index.size());
}

void BM_AuthorizeWritePrefixed(benchmark::State& state) {
  static const auto qs = queries([](int t, int k) {
    // Team 0 etc. are denied on ".audit.", so use the other sub-prefixes.
    return Query{"User:" + team(t), team(t) + "." + kSubPrefixes[k % 3] + "clicks-" + std::to_string(k)};
  });
  run(state, qs, true);
}
BENCHMARK(BM_AuthorizeWritePrefixed);

void BM_AuthorizeWriteLiteral(benchmark::State& state) {
  static const auto qs =
      queries([](int t, int k) { return Query{"User:" + team(t), "app." + team(t) + ".t" + std::to_string(k)}; });
  run(state, qs, true);
}
BENCHMARK(BM_AuthorizeWriteLiteral);

void BM_AuthorizeWriteDeniedOtherTeam(benchmark::State& state) {
  // Bindings apply to the topic but name another principal: denied with no DENY.
  static const auto qs = queries([](int t, int k) {
    return Query{"User:" + team(t), team((t + 1) % kTeams) + ".events.clicks-" + std::to_string(k)};
  });
  run(state, qs, false);
}
BENCHMARK(BM_AuthorizeWriteDeniedOtherTeam);

void BM_AuthorizeWriteDeniedByDeny(benchmark::State& state) {
  // A matching DENY on a prefix: the ".audit." topics of every 50th team.
  static const auto qs = queries([](int t, int k) {
    int d = (t / 50) * 50;
    return Query{"User:" + team(d), team(d) + ".audit.log-" + std::to_string(k)};
  });
  run(state, qs, false);
}
BENCHMARK(BM_AuthorizeWriteDeniedByDeny);

void BM_IndexBuild(benchmark::State& state) {
  const std::vector<Binding> bs = bindings();
  for (auto _ : state) {
    Index index(bs);
    benchmark::DoNotOptimize(index.size());
  }
  state.counters["bindings"] = static_cast<double>(bs.size());
}
BENCHMARK(BM_IndexBuild)->Unit(benchmark::kMicrosecond);

}  // namespace
