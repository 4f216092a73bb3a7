#include "brokerd/acl/acl.h"

#include <gtest/gtest.h>

using namespace brokerd::acl;

namespace {

Binding topic_read(std::string name = "orders") {
  Binding b;
  b.resource_type = ResourceType::topic;
  b.resource_name = std::move(name);
  b.pattern_type = PatternType::literal;
  b.principal = "User:alice";
  b.host = "*";
  b.operation = Operation::read;
  b.permission = Permission::allow;
  return b;
}

// The error for `b` after `change`, or "" when it is valid.
template <typename F>
std::string error_after(F change) {
  Binding b = topic_read();
  change(b);
  auto e = invalid_binding(b);
  return e ? *e : "";
}

template <typename E>
E code(int c) {
  return static_cast<E>(static_cast<int8_t>(c));
}

}  // namespace

TEST(AclBinding, ValidBindings) {
  EXPECT_EQ(invalid_binding(topic_read()), std::nullopt);
  EXPECT_EQ(error_after([](Binding& b) { b.pattern_type = PatternType::prefixed; }), "");
  EXPECT_EQ(error_after([](Binding& b) { b.resource_name = "*"; }), "");
  EXPECT_EQ(error_after([](Binding& b) { b.principal = "User:*"; }), "");
  EXPECT_EQ(error_after([](Binding& b) { b.principal = "User:CN=a,O=b:c"; }), "");  // only the first colon splits
  EXPECT_EQ(error_after([](Binding& b) { b.host = "10.0.0.1"; }), "");
  EXPECT_EQ(error_after([](Binding& b) { b.operation = Operation::all; }), "");
  EXPECT_EQ(error_after([](Binding& b) { b.permission = Permission::deny; }), "");
  EXPECT_EQ(error_after([](Binding& b) {
              b.resource_type = ResourceType::cluster;
              b.resource_name = "kafka-cluster";
              b.operation = Operation::cluster_action;
            }),
            "");
  for (int t = 2; t <= 7; ++t) {
    Binding b = topic_read();
    b.resource_type = code<ResourceType>(t);
    if (b.resource_type == ResourceType::cluster) b.resource_name = kClusterName;
    EXPECT_EQ(invalid_binding(b), std::nullopt) << t;
  }
  for (int o = 2; o <= 14; ++o) {
    Binding b = topic_read();
    b.operation = code<Operation>(o);
    EXPECT_EQ(invalid_binding(b), std::nullopt) << o;
  }
}

TEST(AclBinding, InvalidCodes) {
  EXPECT_EQ(error_after([](Binding& b) { b.resource_type = ResourceType::any; }), "Invalid resourceType ANY");
  EXPECT_EQ(error_after([](Binding& b) { b.resource_type = code<ResourceType>(0); }), "Invalid resourceType UNKNOWN");
  EXPECT_EQ(error_after([](Binding& b) { b.resource_type = code<ResourceType>(8); }), "Invalid resourceType UNKNOWN");
  EXPECT_EQ(error_after([](Binding& b) { b.resource_type = code<ResourceType>(-3); }), "Invalid resourceType UNKNOWN");
  EXPECT_EQ(error_after([](Binding& b) { b.pattern_type = PatternType::any; }), "Invalid patternType ANY");
  EXPECT_EQ(error_after([](Binding& b) { b.pattern_type = PatternType::match; }), "Invalid patternType MATCH");
  EXPECT_EQ(error_after([](Binding& b) { b.pattern_type = code<PatternType>(0); }), "Invalid patternType UNKNOWN");
  EXPECT_EQ(error_after([](Binding& b) { b.pattern_type = code<PatternType>(5); }), "Invalid patternType UNKNOWN");
  EXPECT_EQ(error_after([](Binding& b) { b.operation = Operation::any; }), "Invalid operation ANY");
  EXPECT_EQ(error_after([](Binding& b) { b.operation = code<Operation>(0); }), "Invalid operation UNKNOWN");
  EXPECT_EQ(error_after([](Binding& b) { b.operation = code<Operation>(15); }), "Invalid operation UNKNOWN");
  EXPECT_EQ(error_after([](Binding& b) { b.operation = code<Operation>(127); }), "Invalid operation UNKNOWN");
  EXPECT_EQ(error_after([](Binding& b) { b.permission = Permission::any; }), "Invalid permissionType ANY");
  EXPECT_EQ(error_after([](Binding& b) { b.permission = code<Permission>(0); }), "Invalid permissionType UNKNOWN");
  EXPECT_EQ(error_after([](Binding& b) { b.permission = code<Permission>(4); }), "Invalid permissionType UNKNOWN");
}

TEST(AclBinding, InvalidNamesPrincipalsHosts) {
  EXPECT_EQ(error_after([](Binding& b) { b.resource_name.clear(); }), "Resource name should not be empty");
  for (const char* p : {"alice", "", ":alice", "User:", ":"}) {
    std::string err = error_after([&](Binding& b) { b.principal = p; });
    EXPECT_TRUE(err.starts_with("Could not parse principal from `" + std::string(p) + "`")) << p << ": " << err;
  }
  EXPECT_NE(error_after([](Binding& b) { b.host.clear(); }), "");
}

TEST(AclBinding, ClusterAndPrefixedWildcard) {
  EXPECT_EQ(error_after([](Binding& b) {
              b.resource_type = ResourceType::cluster;
              b.resource_name = "my-cluster";
            }),
            "The only valid name for the CLUSTER resource is kafka-cluster");
  EXPECT_NE(error_after([](Binding& b) {
              b.resource_type = ResourceType::cluster;
              b.resource_name = "*";
            }),
            "");
  EXPECT_NE(error_after([](Binding& b) {
              b.resource_type = ResourceType::cluster;
              b.resource_name = "kafka-cluster";
              b.pattern_type = PatternType::prefixed;
            }),
            "");
  EXPECT_NE(error_after([](Binding& b) {
              b.resource_name = "*";
              b.pattern_type = PatternType::prefixed;
            }),
            "");
  // A prefix that merely contains '*' is an ordinary prefix.
  EXPECT_EQ(error_after([](Binding& b) {
              b.resource_name = "a*";
              b.pattern_type = PatternType::prefixed;
            }),
            "");
}

TEST(AclFilter, Validation) {
  EXPECT_EQ(invalid_filter(Filter{}), std::nullopt);
  Filter usable;
  usable.pattern_type = PatternType::match;
  usable.resource_type = ResourceType::group;
  usable.operation = Operation::all;
  usable.permission = Permission::deny;
  EXPECT_EQ(invalid_filter(usable), std::nullopt);

  auto bad = [](auto change) {
    Filter g;
    change(g);
    return invalid_filter(g).has_value();
  };
  EXPECT_TRUE(bad([](Filter& f) { f.resource_type = code<ResourceType>(0); }));
  EXPECT_TRUE(bad([](Filter& f) { f.resource_type = code<ResourceType>(8); }));
  EXPECT_TRUE(bad([](Filter& f) { f.pattern_type = code<PatternType>(0); }));
  EXPECT_TRUE(bad([](Filter& f) { f.pattern_type = code<PatternType>(5); }));
  EXPECT_TRUE(bad([](Filter& f) { f.operation = code<Operation>(0); }));
  EXPECT_TRUE(bad([](Filter& f) { f.operation = code<Operation>(15); }));
  EXPECT_TRUE(bad([](Filter& f) { f.permission = code<Permission>(0); }));
  EXPECT_TRUE(bad([](Filter& f) { f.permission = code<Permission>(-1); }));
}

TEST(AclFilter, EmptyFilterMatchesEverything) {
  Filter f;
  EXPECT_TRUE(matches(f, topic_read()));
  Binding b = topic_read("x");
  b.resource_type = ResourceType::group;
  b.pattern_type = PatternType::prefixed;
  b.permission = Permission::deny;
  b.operation = Operation::all;
  EXPECT_TRUE(matches(f, b));
}

TEST(AclFilter, EntryFields) {
  Binding b = topic_read();
  b.host = "10.0.0.1";
  Filter f;
  f.principal = "User:alice";
  EXPECT_TRUE(matches(f, b));
  f.principal = "User:bob";
  EXPECT_FALSE(matches(f, b));
  f.principal = "User:*";  // a filter's strings are exact, not wildcards
  EXPECT_FALSE(matches(f, b));
  f.principal.reset();

  f.host = "10.0.0.1";
  EXPECT_TRUE(matches(f, b));
  f.host = "*";
  EXPECT_FALSE(matches(f, b));
  f.host.reset();

  f.operation = Operation::read;
  EXPECT_TRUE(matches(f, b));
  f.operation = Operation::describe;  // implications are the authorizer's, not the filter's
  EXPECT_FALSE(matches(f, b));
  f.operation = Operation::any;

  f.permission = Permission::allow;
  EXPECT_TRUE(matches(f, b));
  f.permission = Permission::deny;
  EXPECT_FALSE(matches(f, b));
  f.permission = Permission::any;

  f.resource_type = ResourceType::topic;
  EXPECT_TRUE(matches(f, b));
  f.resource_type = ResourceType::group;
  EXPECT_FALSE(matches(f, b));
}

TEST(AclFilter, LiteralPrefixedAndAnyPatterns) {
  Binding lit = topic_read("orders");
  Binding pre = topic_read("orders");
  pre.pattern_type = PatternType::prefixed;
  Binding star = topic_read("*");

  Filter f;
  f.pattern_type = PatternType::literal;
  EXPECT_TRUE(matches(f, lit));
  EXPECT_FALSE(matches(f, pre));
  f.resource_name = "orders";
  EXPECT_TRUE(matches(f, lit));
  EXPECT_FALSE(matches(f, star));  // LITERAL is exact: "*" is just another name here
  f.resource_name = "orders-eu";
  EXPECT_FALSE(matches(f, lit));

  f.pattern_type = PatternType::prefixed;
  f.resource_name = "orders";
  EXPECT_TRUE(matches(f, pre));
  EXPECT_FALSE(matches(f, lit));
  f.resource_name = "orders-eu";
  EXPECT_FALSE(matches(f, pre));  // exact name, not a prefix match

  f.pattern_type = PatternType::any;
  f.resource_name = "orders";
  EXPECT_TRUE(matches(f, lit));
  EXPECT_TRUE(matches(f, pre));
  EXPECT_FALSE(matches(f, star));
  f.resource_name = "*";
  EXPECT_TRUE(matches(f, star));
  EXPECT_FALSE(matches(f, lit));
}

TEST(AclFilter, MatchPattern) {
  Binding lit = topic_read("orders-eu");
  Binding other = topic_read("orders");
  Binding star = topic_read("*");
  Binding pre = topic_read("orders-");
  pre.pattern_type = PatternType::prefixed;
  Binding whole = topic_read("orders-eu");
  whole.pattern_type = PatternType::prefixed;
  Binding longer = topic_read("orders-eu-1");
  longer.pattern_type = PatternType::prefixed;
  Binding group = topic_read("orders-eu");
  group.resource_type = ResourceType::group;

  Filter f;
  f.resource_type = ResourceType::topic;
  f.pattern_type = PatternType::match;
  // Unset name: every binding of the type.
  for (const Binding* b : {&lit, &other, &star, &pre, &whole, &longer}) EXPECT_TRUE(matches(f, *b));
  EXPECT_FALSE(matches(f, group));

  f.resource_name = "orders-eu";
  EXPECT_TRUE(matches(f, lit));
  EXPECT_TRUE(matches(f, star));
  EXPECT_TRUE(matches(f, pre));
  EXPECT_TRUE(matches(f, whole));  // a prefix equal to the whole name
  EXPECT_FALSE(matches(f, other));  // a literal that is only a prefix of the name
  EXPECT_FALSE(matches(f, longer));
  EXPECT_FALSE(matches(f, group));

  f.resource_type = ResourceType::any;
  EXPECT_TRUE(matches(f, group));

  // MATCH for "*" finds the wildcard literal only (and no prefixes that aren't prefixes of "*").
  f.resource_type = ResourceType::topic;
  f.resource_name = "*";
  EXPECT_TRUE(matches(f, star));
  EXPECT_FALSE(matches(f, lit));
  EXPECT_FALSE(matches(f, pre));
}

TEST(AclNames, NamesAndParse) {
  EXPECT_EQ(name(ResourceType::topic), "TOPIC");
  EXPECT_EQ(name(ResourceType::transactional_id), "TRANSACTIONAL_ID");
  EXPECT_EQ(name(ResourceType::delegation_token), "DELEGATION_TOKEN");
  EXPECT_EQ(name(ResourceType::user), "USER");
  EXPECT_EQ(name(code<ResourceType>(0)), "UNKNOWN");
  EXPECT_EQ(name(code<ResourceType>(42)), "UNKNOWN");
  EXPECT_EQ(name(PatternType::literal), "LITERAL");
  EXPECT_EQ(name(PatternType::prefixed), "PREFIXED");
  EXPECT_EQ(name(PatternType::match), "MATCH");
  EXPECT_EQ(name(code<PatternType>(-1)), "UNKNOWN");
  EXPECT_EQ(name(Operation::remove), "DELETE");
  EXPECT_EQ(name(Operation::idempotent_write), "IDEMPOTENT_WRITE");
  EXPECT_EQ(name(Operation::describe_tokens), "DESCRIBE_TOKENS");
  EXPECT_EQ(name(code<Operation>(15)), "UNKNOWN");
  EXPECT_EQ(name(Permission::allow), "ALLOW");
  EXPECT_EQ(name(Permission::deny), "DENY");
  EXPECT_EQ(name(code<Permission>(9)), "UNKNOWN");

  // Every code's name parses back to it, in any case.
  for (int c = 1; c <= 7; ++c) {
    auto t = code<ResourceType>(c);
    EXPECT_EQ(parse_resource_type(name(t)), t);
  }
  for (int c = 1; c <= 4; ++c) {
    auto t = code<PatternType>(c);
    EXPECT_EQ(parse_pattern_type(name(t)), t);
  }
  for (int c = 1; c <= 14; ++c) {
    auto o = code<Operation>(c);
    EXPECT_EQ(parse_operation(name(o)), o);
  }
  for (int c = 1; c <= 3; ++c) {
    auto p = code<Permission>(c);
    EXPECT_EQ(parse_permission(name(p)), p);
  }
  EXPECT_EQ(parse_resource_type("topic"), ResourceType::topic);
  EXPECT_EQ(parse_resource_type("Transactional_Id"), ResourceType::transactional_id);
  EXPECT_EQ(parse_pattern_type("prefixed"), PatternType::prefixed);
  EXPECT_EQ(parse_operation("delete"), Operation::remove);
  EXPECT_EQ(parse_operation("Describe_Configs"), Operation::describe_configs);
  EXPECT_EQ(parse_permission("allow"), Permission::allow);

  EXPECT_EQ(parse_resource_type("unknown"), std::nullopt);
  EXPECT_EQ(parse_resource_type("topics"), std::nullopt);
  EXPECT_EQ(parse_resource_type(""), std::nullopt);
  EXPECT_EQ(parse_pattern_type("UNKNOWN"), std::nullopt);
  EXPECT_EQ(parse_operation("remove"), std::nullopt);
  EXPECT_EQ(parse_operation("describe-configs"), std::nullopt);
  EXPECT_EQ(parse_permission("permit"), std::nullopt);
}
