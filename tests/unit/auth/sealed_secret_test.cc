#include "brokerd/auth/sealed_secret.h"

#include <gtest/gtest.h>

namespace brokerd::auth {
namespace {

TEST(SealedSecret, OpensOnlyUnderItsSecretAndNeverRepeats) {
  const std::string sealed = seal("source-password", "cluster secret");
  EXPECT_TRUE(is_sealed(sealed));
  EXPECT_EQ(sealed.find("source-password"), std::string::npos);
  EXPECT_EQ(unseal(sealed, "cluster secret"), "source-password");
  EXPECT_EQ(unseal(sealed, "another secret"), std::nullopt);
  EXPECT_NE(seal("source-password", "cluster secret"), sealed) << "a fresh salt and nonce each time";
  EXPECT_EQ(unseal(seal("", "s"), "s"), "");
}

TEST(SealedSecret, AlteredOrMalformedValuesDoNotOpen) {
  std::string sealed = seal("pw", "s");
  sealed[sealed.size() - 3] = sealed[sealed.size() - 3] == 'A' ? 'B' : 'A';
  EXPECT_EQ(unseal(sealed, "s"), std::nullopt);
  EXPECT_EQ(unseal("sealed:v1:", "s"), std::nullopt);
  EXPECT_EQ(unseal("sealed:v1:!!!!", "s"), std::nullopt);
  EXPECT_EQ(unseal("pw", "s"), std::nullopt);
  EXPECT_FALSE(is_sealed("pw"));
}

}  // namespace
}  // namespace brokerd::auth
