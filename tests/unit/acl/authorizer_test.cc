#include "brokerd/acl/authorizer.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

using namespace brokerd::acl;

namespace {

Binding bind(ResourceType type, std::string name, PatternType pattern, std::string principal, Operation op,
             Permission perm = Permission::allow, std::string host = "*") {
  Binding b;
  b.resource_type = type;
  b.resource_name = std::move(name);
  b.pattern_type = pattern;
  b.principal = std::move(principal);
  b.host = std::move(host);
  b.operation = op;
  b.permission = perm;
  return b;
}

Binding topic(std::string name, std::string principal, Operation op, Permission perm = Permission::allow,
              std::string host = "*") {
  return bind(ResourceType::topic, std::move(name), PatternType::literal, std::move(principal), op, perm,
              std::move(host));
}

Binding prefixed(std::string name, std::string principal, Operation op, Permission perm = Permission::allow) {
  return bind(ResourceType::topic, std::move(name), PatternType::prefixed, std::move(principal), op, perm);
}

constexpr auto kHost = "10.0.0.1";

// A fixture with one Index and the default config (no super users, deny when no ACL).
class Authz : public ::testing::Test {
 protected:
  void use(std::vector<Binding> bindings) { index_ = std::make_unique<Index>(bindings); }

  bool can(std::string_view principal, Operation op, std::string_view topic_name, std::string_view host = kHost) {
    return index_->authorize(cfg_, principal, host, op, ResourceType::topic, topic_name);
  }
  bool can(std::string_view principal, Operation op, ResourceType type, std::string_view name,
           std::string_view host = kHost) {
    return index_->authorize(cfg_, principal, host, op, type, name);
  }

  AuthorizerConfig cfg_;
  std::unique_ptr<Index> index_ = std::make_unique<Index>();
};

}  // namespace

TEST_F(Authz, EmptyIndex) {
  EXPECT_EQ(index_->size(), 0u);
  EXPECT_FALSE(can("User:alice", Operation::read, "orders"));
  cfg_.allow_everyone_if_no_acl_found = true;
  EXPECT_TRUE(can("User:alice", Operation::read, "orders"));
  EXPECT_TRUE(can("User:alice", Operation::cluster_action, ResourceType::cluster, kClusterName));
}

TEST_F(Authz, Literal) {
  use({topic("orders", "User:alice", Operation::write)});
  EXPECT_EQ(index_->size(), 1u);
  EXPECT_TRUE(can("User:alice", Operation::write, "orders"));
  EXPECT_FALSE(can("User:alice", Operation::read, "orders"));
  EXPECT_FALSE(can("User:bob", Operation::write, "orders"));
  EXPECT_FALSE(can("User:alice", Operation::write, "orders-eu"));  // literal, not a prefix
  EXPECT_FALSE(can("User:alice", Operation::write, "order"));
  EXPECT_FALSE(can("User:alice", Operation::write, ""));
  EXPECT_FALSE(can("user:alice", Operation::write, "orders"));  // principals are case-sensitive
}

TEST_F(Authz, LiteralWildcardResource) {
  use({topic("*", "User:alice", Operation::read), topic("orders", "User:bob", Operation::read)});
  EXPECT_TRUE(can("User:alice", Operation::read, "orders"));
  EXPECT_TRUE(can("User:alice", Operation::read, "anything-at-all"));
  EXPECT_TRUE(can("User:alice", Operation::read, "*"));
  EXPECT_TRUE(can("User:bob", Operation::read, "orders"));
  EXPECT_FALSE(can("User:bob", Operation::read, "payments"));  // the "*" binding applies, but to alice
  EXPECT_FALSE(can("User:alice", Operation::read, ResourceType::group, "orders"));
}

TEST_F(Authz, PrefixedOfSeveralLengths) {
  use({prefixed("t", "User:a", Operation::read), prefixed("team-042.", "User:b", Operation::read),
       prefixed("team-042.orders", "User:c", Operation::read), prefixed("team-042.orders.eu", "User:d", Operation::read),
       prefixed("team-043.", "User:e", Operation::read), prefixed("x", "User:f", Operation::read)});
  const std::string name = "team-042.orders.eu";
  EXPECT_TRUE(can("User:a", Operation::read, name));
  EXPECT_TRUE(can("User:b", Operation::read, name));
  EXPECT_TRUE(can("User:c", Operation::read, name));
  EXPECT_TRUE(can("User:d", Operation::read, name));  // a prefix equal to the whole name
  EXPECT_FALSE(can("User:e", Operation::read, name));
  EXPECT_FALSE(can("User:f", Operation::read, name));

  EXPECT_TRUE(can("User:b", Operation::read, "team-042."));
  EXPECT_FALSE(can("User:b", Operation::read, "team-042"));  // shorter than the prefix
  EXPECT_FALSE(can("User:c", Operation::read, "team-042.order"));
  EXPECT_TRUE(can("User:c", Operation::read, "team-042.orders-and-more"));
  EXPECT_FALSE(can("User:d", Operation::read, "team-042.orders.e"));
  EXPECT_TRUE(can("User:e", Operation::read, "team-043.x"));
  EXPECT_TRUE(can("User:a", Operation::read, "t"));
  EXPECT_FALSE(can("User:a", Operation::read, "u"));
}

TEST_F(Authz, LongNamesAndPrefixesAcrossWordBoundaries) {
  // Prefix lengths on both sides of 8-byte boundaries, against names that share them.
  std::string name(40, 'a');
  for (size_t i = 0; i < name.size(); ++i) name[i] = static_cast<char>('a' + i % 26);
  std::vector<Binding> bs;
  for (size_t len : {7u, 8u, 9u, 16u, 17u, 31u, 32u, 33u, 40u})
    bs.push_back(prefixed(name.substr(0, len), "User:p" + std::to_string(len), Operation::read));
  use(bs);
  for (size_t len : {7u, 8u, 9u, 16u, 17u, 31u, 32u, 33u, 40u}) {
    std::string who = "User:p" + std::to_string(len);
    EXPECT_TRUE(can(who, Operation::read, name)) << len;
    EXPECT_EQ(can(who, Operation::read, name.substr(0, len)), true) << len;
    EXPECT_FALSE(can(who, Operation::read, name.substr(0, len - 1))) << len;
    std::string changed = name;
    changed[len - 1] = '#';
    EXPECT_FALSE(can(who, Operation::read, changed)) << len;
  }
}

TEST_F(Authz, DenyWinsOverAllow) {
  // DENY literal over ALLOW prefixed.
  use({prefixed("orders", "User:alice", Operation::write), topic("orders-secret", "User:alice", Operation::write,
                                                                  Permission::deny)});
  EXPECT_TRUE(can("User:alice", Operation::write, "orders-eu"));
  EXPECT_FALSE(can("User:alice", Operation::write, "orders-secret"));

  // DENY prefixed over ALLOW literal.
  use({topic("orders-eu", "User:alice", Operation::write), prefixed("orders", "User:alice", Operation::write,
                                                                      Permission::deny)});
  EXPECT_FALSE(can("User:alice", Operation::write, "orders-eu"));

  // DENY "*" over ALLOW literal, DENY and ALLOW on the same literal.
  use({topic("orders", "User:alice", Operation::write), topic("*", "User:alice", Operation::write, Permission::deny)});
  EXPECT_FALSE(can("User:alice", Operation::write, "orders"));
  use({topic("orders", "User:alice", Operation::read), topic("orders", "User:alice", Operation::read, Permission::deny)});
  EXPECT_FALSE(can("User:alice", Operation::read, "orders"));

  // A DENY for someone else, another operation or another host does not apply.
  use({topic("orders", "User:alice", Operation::read), topic("orders", "User:bob", Operation::read, Permission::deny),
       topic("orders", "User:alice", Operation::write, Permission::deny),
       topic("orders", "User:alice", Operation::read, Permission::deny, "10.9.9.9")});
  EXPECT_TRUE(can("User:alice", Operation::read, "orders"));
  EXPECT_FALSE(can("User:alice", Operation::read, "orders", "10.9.9.9"));
}

TEST_F(Authz, AllOperation) {
  use({topic("orders", "User:alice", Operation::all), topic("audit", "User:alice", Operation::read),
       topic("audit", "User:alice", Operation::all, Permission::deny)});
  for (int o = 2; o <= 14; ++o)
    EXPECT_TRUE(can("User:alice", static_cast<Operation>(o), "orders")) << name(static_cast<Operation>(o));
  for (int o = 2; o <= 14; ++o)
    EXPECT_FALSE(can("User:alice", static_cast<Operation>(o), "audit")) << name(static_cast<Operation>(o));
  EXPECT_FALSE(can("User:alice", Operation::any, "orders"));  // ANY is no operation
  EXPECT_FALSE(can("User:alice", static_cast<Operation>(int8_t{99}), "orders"));
}

TEST_F(Authz, ImpliedDescribe) {
  use({topic("r", "User:a", Operation::read), topic("w", "User:a", Operation::write),
       topic("d", "User:a", Operation::remove), topic("al", "User:a", Operation::alter),
       topic("c", "User:a", Operation::create), topic("ac", "User:a", Operation::alter_configs),
       topic("dc", "User:a", Operation::describe_configs), topic("ds", "User:a", Operation::describe)});
  for (auto t : {"r", "w", "d", "al"}) EXPECT_TRUE(can("User:a", Operation::describe, t)) << t;
  EXPECT_FALSE(can("User:a", Operation::describe, "c"));
  EXPECT_FALSE(can("User:a", Operation::describe, "ac"));
  EXPECT_TRUE(can("User:a", Operation::describe_configs, "ac"));
  EXPECT_FALSE(can("User:a", Operation::describe_configs, "r"));
  // Implication runs one way only.
  EXPECT_FALSE(can("User:a", Operation::read, "ds"));
  EXPECT_FALSE(can("User:a", Operation::alter_configs, "dc"));
  EXPECT_FALSE(can("User:a", Operation::write, "r"));
}

TEST_F(Authz, DenyIsNotImplied) {
  // A DENY DESCRIBE doesn't deny READ; a DENY READ doesn't deny the DESCRIBE an ALLOW grants.
  use({topic("orders", "User:a", Operation::read), topic("orders", "User:a", Operation::describe, Permission::deny)});
  EXPECT_TRUE(can("User:a", Operation::read, "orders"));
  EXPECT_FALSE(can("User:a", Operation::describe, "orders"));

  use({topic("orders", "User:a", Operation::all), topic("orders", "User:a", Operation::read, Permission::deny)});
  EXPECT_FALSE(can("User:a", Operation::read, "orders"));
  EXPECT_TRUE(can("User:a", Operation::describe, "orders"));
  EXPECT_TRUE(can("User:a", Operation::write, "orders"));

  use({topic("orders", "User:a", Operation::alter_configs),
       topic("orders", "User:a", Operation::alter_configs, Permission::deny)});
  EXPECT_FALSE(can("User:a", Operation::alter_configs, "orders"));
  EXPECT_TRUE(can("User:a", Operation::describe_configs, "orders"));
}

TEST_F(Authz, WildcardPrincipalAndHost) {
  use({topic("public", "User:*", Operation::read), topic("orders", "User:alice", Operation::write, Permission::allow,
                                                            "10.0.0.1"),
       topic("orders", "User:*", Operation::write, Permission::deny, "10.6.6.6")});
  EXPECT_TRUE(can("User:alice", Operation::read, "public"));
  EXPECT_TRUE(can("User:bob", Operation::read, "public", "192.168.1.1"));
  EXPECT_TRUE(can("User:ANONYMOUS", Operation::read, "public"));
  EXPECT_FALSE(can("User:bob", Operation::write, "public"));

  // A specific host.
  EXPECT_TRUE(can("User:alice", Operation::write, "orders", "10.0.0.1"));
  EXPECT_FALSE(can("User:alice", Operation::write, "orders", "10.0.0.2"));
  EXPECT_FALSE(can("User:alice", Operation::write, "orders", "10.6.6.6"));
  EXPECT_FALSE(can("User:alice", Operation::write, "orders", "10.0.0.10"));
}

TEST_F(Authz, LiteralStarPrincipalIsNotAPattern) {
  // Only the whole principal "User:*" is a wildcard; a '*' elsewhere is an ordinary character.
  use({topic("orders", "User:al*", Operation::read)});
  EXPECT_FALSE(can("User:alice", Operation::read, "orders"));
  EXPECT_TRUE(can("User:al*", Operation::read, "orders"));
}

TEST_F(Authz, SuperUsers) {
  cfg_.super_users = {"User:admin", "User:ops"};
  use({topic("orders", "User:admin", Operation::all, Permission::deny)});
  EXPECT_TRUE(can("User:admin", Operation::write, "orders"));  // even over a DENY
  EXPECT_TRUE(can("User:ops", Operation::alter, ResourceType::cluster, kClusterName));
  EXPECT_TRUE(can("User:ops", Operation::read, "no-acls-here"));
  EXPECT_FALSE(can("User:administrator", Operation::write, "orders"));
  EXPECT_FALSE(can("User:admi", Operation::read, "no-acls-here"));
  EXPECT_FALSE(can("user:admin", Operation::read, "no-acls-here"));
}

TEST_F(Authz, AllowEveryoneIfNoAclFound) {
  use({topic("orders", "User:alice", Operation::read), prefixed("team-1.", "User:bob", Operation::read),
       bind(ResourceType::group, "payments", PatternType::literal, "User:bob", Operation::read)});
  for (bool allow : {false, true}) {
    cfg_.allow_everyone_if_no_acl_found = allow;
    // Bindings exist on the resource (for someone else): denied either way.
    EXPECT_FALSE(can("User:bob", Operation::read, "orders")) << allow;
    EXPECT_FALSE(can("User:alice", Operation::write, "orders")) << allow;
    EXPECT_FALSE(can("User:alice", Operation::read, "team-1.x")) << allow;
    EXPECT_TRUE(can("User:alice", Operation::read, "orders")) << allow;
    // Nothing applies: bindings on other resources (and the group "payments") don't count.
    EXPECT_EQ(can("User:carol", Operation::read, "payments"), allow);
    EXPECT_EQ(can("User:carol", Operation::read, "orders-eu"), allow);
    EXPECT_EQ(can("User:carol", Operation::read, "team-1"), allow);
    EXPECT_EQ(can("User:carol", Operation::read, ResourceType::group, "orders"), allow);
  }
}

TEST_F(Authz, ResourceTypesAreKeptApart) {
  use({topic("shared", "User:a", Operation::read),
       bind(ResourceType::group, "shared", PatternType::literal, "User:b", Operation::read),
       bind(ResourceType::group, "grp-", PatternType::prefixed, "User:c", Operation::read),
       bind(ResourceType::transactional_id, "*", PatternType::literal, "User:d", Operation::write)});
  EXPECT_TRUE(can("User:a", Operation::read, "shared"));
  EXPECT_FALSE(can("User:a", Operation::read, ResourceType::group, "shared"));
  EXPECT_TRUE(can("User:b", Operation::read, ResourceType::group, "shared"));
  EXPECT_FALSE(can("User:b", Operation::read, "shared"));
  EXPECT_TRUE(can("User:c", Operation::read, ResourceType::group, "grp-1"));
  EXPECT_FALSE(can("User:c", Operation::read, "grp-1"));
  EXPECT_TRUE(can("User:d", Operation::write, ResourceType::transactional_id, "tx-1"));
  EXPECT_FALSE(can("User:d", Operation::write, "tx-1"));
  // Codes that name no resource type are never granted.
  EXPECT_FALSE(can("User:a", Operation::read, ResourceType::any, "shared"));
  EXPECT_FALSE(can("User:a", Operation::read, static_cast<ResourceType>(int8_t{0}), "shared"));
  EXPECT_FALSE(can("User:a", Operation::read, static_cast<ResourceType>(int8_t{42}), "shared"));
}

TEST_F(Authz, ClusterResource) {
  use({bind(ResourceType::cluster, std::string(kClusterName), PatternType::literal, "User:broker",
            Operation::cluster_action),
       bind(ResourceType::cluster, std::string(kClusterName), PatternType::literal, "User:app",
            Operation::idempotent_write),
       bind(ResourceType::cluster, std::string(kClusterName), PatternType::literal, "User:ops", Operation::alter_configs)});
  EXPECT_TRUE(can("User:broker", Operation::cluster_action, ResourceType::cluster, kClusterName));
  EXPECT_FALSE(can("User:broker", Operation::create, ResourceType::cluster, kClusterName));
  EXPECT_TRUE(can("User:app", Operation::idempotent_write, ResourceType::cluster, kClusterName));
  EXPECT_TRUE(can("User:ops", Operation::describe_configs, ResourceType::cluster, kClusterName));
  EXPECT_FALSE(can("User:ops", Operation::describe, ResourceType::cluster, kClusterName));
  EXPECT_FALSE(can("User:app", Operation::idempotent_write, "kafka-cluster"));  // a topic of that name
}

TEST_F(Authz, InvalidBindingsAreIgnored) {
  Binding bad = topic("orders", "alice", Operation::read);  // no principal type
  Binding any_op = topic("orders", "User:alice", Operation::any);
  use({bad, any_op, topic("payments", "User:alice", Operation::read)});
  EXPECT_EQ(index_->size(), 1u);
  cfg_.allow_everyone_if_no_acl_found = true;
  EXPECT_TRUE(can("User:bob", Operation::read, "orders"));  // nothing (valid) applies to it
  EXPECT_FALSE(can("User:bob", Operation::read, "payments"));
}

TEST_F(Authz, ManyBindings) {
  // A few thousand bindings on many names: each still finds only its own.
  std::vector<Binding> bs;
  for (int i = 0; i < 2000; ++i) {
    std::string team = "team-" + std::to_string(i);
    bs.push_back(topic(team + ".events", "User:" + team, Operation::write));
    bs.push_back(prefixed(team + ".", "User:" + team + "-reader", Operation::read));
  }
  bs.push_back(topic("team-7.events", "User:team-7", Operation::write, Permission::deny));
  use(bs);
  EXPECT_EQ(index_->size(), 4001u);
  EXPECT_TRUE(can("User:team-5", Operation::write, "team-5.events"));
  EXPECT_FALSE(can("User:team-5", Operation::write, "team-6.events"));
  EXPECT_TRUE(can("User:team-1999-reader", Operation::read, "team-1999.anything"));
  EXPECT_FALSE(can("User:team-1999-reader", Operation::read, "team-199.anything"));
  EXPECT_FALSE(can("User:team-7", Operation::write, "team-7.events"));
  EXPECT_TRUE(can("User:team-7-reader", Operation::describe, "team-7.events"));
}

namespace {

// The rules read straight off the header, binding by binding, for the randomised test.
bool reference(const std::vector<Binding>& bs, const AuthorizerConfig& cfg, const std::string& principal,
               const std::string& host, Operation op, ResourceType type, const std::string& name) {
  for (const auto& su : cfg.super_users)
    if (su == principal) return true;
  bool applies = false, allowed = false;
  for (const Binding& b : bs) {
    if (b.resource_type != type) continue;
    bool pattern = b.pattern_type == PatternType::literal ? (b.resource_name == name || b.resource_name == "*")
                                                          : name.starts_with(b.resource_name);
    if (!pattern) continue;
    applies = true;
    if (b.principal != principal && b.principal != "User:*") continue;
    if (b.host != host && b.host != "*") continue;
    bool allow = b.permission == Permission::allow;
    bool implied = allow && ((op == Operation::describe &&
                              (b.operation == Operation::read || b.operation == Operation::write ||
                               b.operation == Operation::remove || b.operation == Operation::alter)) ||
                             (op == Operation::describe_configs && b.operation == Operation::alter_configs));
    if (b.operation != Operation::all && b.operation != op && !implied) continue;
    if (!allow) return false;
    allowed = true;
  }
  return allowed || (!applies && cfg.allow_everyone_if_no_acl_found);
}

}  // namespace

TEST(AuthzRandom, AgreesWithTheRulesBindingByBinding) {
  std::mt19937 rng(20240601);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  // Names over a two-letter alphabet, up to 19 long, so prefixes overlap often and cross
  // the hasher's 8-byte words.
  auto random_name = [&] {
    std::string n(1 + pick(19), 'a');
    for (char& ch : n) ch = pick(2) ? 'a' : 'b';
    return n;
  };
  const std::vector<std::string> principals = {"User:alice", "User:bob", "User:carol", "Group:ops"};
  const std::vector<std::string> hosts = {"10.0.0.1", "10.0.0.2"};
  const std::vector<Operation> ops = {Operation::all,      Operation::read,     Operation::write,
                                      Operation::remove,   Operation::alter,    Operation::describe,
                                      Operation::create,   Operation::alter_configs, Operation::describe_configs};
  for (int round = 0; round < 40; ++round) {
    std::vector<Binding> bs;
    int n = 1 + pick(120);
    for (int i = 0; i < n; ++i) {
      Binding b;
      b.resource_type = pick(4) ? ResourceType::topic : ResourceType::group;
      b.pattern_type = pick(2) ? PatternType::literal : PatternType::prefixed;
      b.resource_name = b.pattern_type == PatternType::literal && pick(15) == 0 ? "*" : random_name();
      b.principal = pick(6) == 0 ? "User:*" : principals[pick(3)];
      b.host = pick(3) == 0 ? hosts[pick(2)] : "*";
      b.operation = ops[pick(static_cast<int>(ops.size()))];
      b.permission = pick(5) == 0 ? Permission::deny : Permission::allow;
      bs.push_back(std::move(b));
    }
    Index index(bs);
    AuthorizerConfig cfg;
    cfg.allow_everyone_if_no_acl_found = round % 2 == 1;
    if (round % 5 == 0) cfg.super_users = {"User:carol"};
    for (int q = 0; q < 400; ++q) {
      const std::string& principal = principals[pick(4)];
      const std::string& host = hosts[pick(2)];
      Operation op = ops[1 + pick(static_cast<int>(ops.size()) - 1)];
      ResourceType type = pick(4) ? ResourceType::topic : ResourceType::group;
      std::string name = pick(10) == 0 ? bs[pick(n)].resource_name : random_name();
      ASSERT_EQ(index.authorize(cfg, principal, host, op, type, name), reference(bs, cfg, principal, host, op, type, name))
          << "round " << round << " " << principal << " " << host << " " << brokerd::acl::name(op) << " " << brokerd::acl::name(type)
          << " " << name;
    }
  }
}

TEST(AuthorizeAny, AnAllowNoDenyCoversGrantsTheType) {
  using namespace brokerd::acl;
  AuthorizerConfig cfg;
  auto binding = [](std::string name, PatternType pattern, std::string principal, Operation op, Permission perm) {
    Binding b;
    b.resource_type = ResourceType::topic;
    b.resource_name = std::move(name);
    b.pattern_type = pattern;
    b.principal = std::move(principal);
    b.host = "*";
    b.operation = op;
    b.permission = perm;
    return b;
  };
  Index none;
  EXPECT_FALSE(none.authorize_any(cfg, "User:a", "1.2.3.4", Operation::write, ResourceType::topic));
  cfg.allow_everyone_if_no_acl_found = true;
  EXPECT_TRUE(none.authorize_any(cfg, "User:a", "1.2.3.4", Operation::write, ResourceType::topic));
  cfg.allow_everyone_if_no_acl_found = false;

  Index some({binding("team-a.", PatternType::prefixed, "User:a", Operation::write, Permission::allow),
              binding("other", PatternType::literal, "User:b", Operation::read, Permission::allow)});
  EXPECT_TRUE(some.authorize_any(cfg, "User:a", "1.2.3.4", Operation::write, ResourceType::topic));
  EXPECT_FALSE(some.authorize_any(cfg, "User:b", "1.2.3.4", Operation::write, ResourceType::topic));
  EXPECT_FALSE(some.authorize_any(cfg, "User:a", "1.2.3.4", Operation::write, ResourceType::group));

  // A DENY whose pattern covers the ALLOW's cancels it; one that covers less does not.
  Index denied({binding("team-a.", PatternType::prefixed, "User:a", Operation::write, Permission::allow),
                binding("team-", PatternType::prefixed, "User:a", Operation::write, Permission::deny)});
  EXPECT_FALSE(denied.authorize_any(cfg, "User:a", "1.2.3.4", Operation::write, ResourceType::topic));
  Index narrower({binding("team-a.", PatternType::prefixed, "User:a", Operation::write, Permission::allow),
                  binding("team-a.secret", PatternType::literal, "User:a", Operation::write, Permission::deny)});
  EXPECT_TRUE(narrower.authorize_any(cfg, "User:a", "1.2.3.4", Operation::write, ResourceType::topic));
  cfg.super_users = {"User:root"};
  EXPECT_TRUE(denied.authorize_any(cfg, "User:root", "1.2.3.4", Operation::write, ResourceType::topic));
}
