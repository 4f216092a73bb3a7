// Subjects as Java's X500Principal.getName() writes them, the form Kafka's principals take.
#include "net/subject_name.h"

#include <gtest/gtest.h>
#include <openssl/x509.h>

#include <memory>
#include <string>

namespace brokerd::net {
namespace {

using Name = std::unique_ptr<X509_NAME, decltype(&X509_NAME_free)>;

Name name() { return Name(X509_NAME_new(), X509_NAME_free); }

// Appends an attribute as a new RDN (set 0) or to the last one (set -1).
void add(X509_NAME* n, const char* field, int type, const std::string& value, int set = 0) {
  ASSERT_EQ(1, X509_NAME_add_entry_by_txt(n, field, type, reinterpret_cast<const unsigned char*>(value.data()),
                                          static_cast<int>(value.size()), -1, set));
}

TEST(SubjectName, KeywordsLastRdnFirst) {
  auto n = name();
  add(n.get(), "O", MBSTRING_ASC, "corp");
  add(n.get(), "OU", MBSTRING_ASC, "eng");
  add(n.get(), "CN", MBSTRING_ASC, "alice");
  EXPECT_EQ(java_rfc2253_name(n.get()), "CN=alice,OU=eng,O=corp");
}

TEST(SubjectName, OtherAttributesByOidWithTheirDerValueInHex) {
  auto n = name();
  add(n.get(), "CN", MBSTRING_ASC, "alice");
  add(n.get(), "emailAddress", V_ASN1_IA5STRING, "alice@corp.com");
  add(n.get(), "serialNumber", V_ASN1_PRINTABLESTRING, "42");
  EXPECT_EQ(java_rfc2253_name(n.get()),
            "2.5.4.5=#13023432,1.2.840.113549.1.9.1=#160e616c69636540636f72702e636f6d,CN=alice");
}

TEST(SubjectName, KeywordListIsJavas) {
  auto n = name();
  add(n.get(), "DC", V_ASN1_IA5STRING, "com");
  add(n.get(), "UID", MBSTRING_ASC, "u1");
  add(n.get(), "street", MBSTRING_ASC, "Main");
  add(n.get(), "C", MBSTRING_ASC, "FR");
  add(n.get(), "ST", MBSTRING_ASC, "IDF");
  add(n.get(), "L", MBSTRING_ASC, "Paris");
  add(n.get(), "title", V_ASN1_UTF8STRING, "x");  // 2.5.4.12, not a keyword in RFC 2253 form
  EXPECT_EQ(java_rfc2253_name(n.get()), "2.5.4.12=#0c0178,L=Paris,ST=IDF,C=FR,STREET=Main,UID=u1,DC=com");
}

TEST(SubjectName, EscapesAsJavaDoes) {
  auto n = name();
  add(n.get(), "CN", MBSTRING_UTF8, " a=b,c+d#e;f\"g\\h<i>j ");
  EXPECT_EQ(java_rfc2253_name(n.get()), "CN=\\ a\\=b\\,c\\+d\\#e\\;f\\\"g\\\\h\\<i\\>j\\ ");
}

TEST(SubjectName, Utf8AndBmpValuesAsText) {
  auto n = name();
  add(n.get(), "O", MBSTRING_UTF8, "Société");
  const std::string bmp("\x00h\x00\xe9", 4);  // "hé" in UCS-2
  add(n.get(), "CN", V_ASN1_BMPSTRING, bmp);
  EXPECT_EQ(java_rfc2253_name(n.get()), "CN=hé,O=Société");
}

TEST(SubjectName, MultiValuedRdnJoinedByPlus) {
  auto n = name();
  add(n.get(), "O", MBSTRING_ASC, "corp");
  add(n.get(), "CN", MBSTRING_ASC, "alice");
  add(n.get(), "UID", MBSTRING_ASC, "a1", -1);
  EXPECT_EQ(java_rfc2253_name(n.get()), "CN=alice+UID=a1,O=corp");
}

}  // namespace
}  // namespace brokerd::net
