#include <catch2/catch.hpp>

#include "common/spellcheck.h"

using accel::ClosestMatch;
using accel::EditDistance;

TEST_CASE("EditDistance counts edits and adjacent transpositions", "[spellcheck]") {
  CHECK(EditDistance("", "") == 0);
  CHECK(EditDistance("abc", "") == 3);
  CHECK(EditDistance("tensor", "tensor") == 0);
  CHECK(EditDistance("tensr", "tensor") == 1);
  CHECK(EditDistance("tesnor", "tensor") == 1);  // transposition
  CHECK(EditDistance("kitten", "sitting") == 3);
}

TEST_CASE("ClosestMatch suggests near candidates only", "[spellcheck]") {
  const std::vector<std::string> commands = {"validate", "plan", "estimate-memory", "run",
                                             "schema"};
  CHECK(ClosestMatch("valdate", commands) == std::string("validate"));
  CHECK(ClosestMatch("paln", commands) == std::string("plan"));
  CHECK(ClosestMatch("SCHEMA", commands) == std::string("schema"));  // case-insensitive
  CHECK_FALSE(ClosestMatch("deploy", commands).has_value());
  CHECK_FALSE(ClosestMatch("x", {}).has_value());
  // Ties go to the earliest candidate.
  CHECK(ClosestMatch("ab", {"ac", "ad"}) == std::string("ac"));
  // Hostile lengths do not allocate huge tables.
  CHECK_FALSE(ClosestMatch(std::string(100000, 'a'), commands).has_value());
}
