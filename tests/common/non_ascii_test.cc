#include <catch2/catch.hpp>

#include "common/non_ascii.h"

using namespace accel;

TEST_CASE("FirstNonAscii finds the first whole non-ASCII character", "[non_ascii]") {
  CHECK_FALSE(FirstNonAscii("num_layers").has_value());
  std::optional<NonAsciiCharacter> found = FirstNonAscii("num_l\xd0\xb0yers");
  REQUIRE(found);
  CHECK(found->code_point == 0x430);
  CHECK(found->offset == 5);
  found = FirstNonAscii("a\xff" "b\xe2\x80\xae");  // a stray byte is not a character
  REQUIRE(found);
  CHECK(found->code_point == 0x202E);
  CHECK(found->offset == 3);
}

TEST_CASE("CodePointName gives the Unicode name when there is one", "[non_ascii]") {
  CHECK(CodePointName(0x430) == "U+0430 CYRILLIC SMALL LETTER A");
  CHECK(CodePointName(0x202E) == "U+202E RIGHT-TO-LEFT OVERRIDE");
  CHECK(CodePointName(0x378) == "U+0378");  // unassigned
}

TEST_CASE("AsciiSkeleton makes a look-alike letter one character", "[non_ascii]") {
  CHECK(AsciiSkeleton("g\xd1\x80t2") == "g?t2");
  CHECK(AsciiSkeleton("a\xff" "b") == "a?b");
  CHECK(AsciiSkeleton("plain") == "plain");
}
