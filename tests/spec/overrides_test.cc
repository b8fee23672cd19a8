#include <catch2/catch.hpp>

#include "spec/overrides.h"

using accel::spec::ParseOverride;

TEST_CASE("ParseOverride splits key paths, indices and values", "[overrides]") {
  auto o = ParseOverride("parallel.tensor=2");
  REQUIRE(o);
  CHECK(o->path == "parallel.tensor");
  CHECK(o->index == -1);
  CHECK(o->value == "2");

  o = ParseOverride("training.optimizer.betas[1]=0.99");
  REQUIRE(o);
  CHECK(o->path == "training.optimizer.betas");
  CHECK(o->index == 1);
  CHECK(o->value == "0.99");

  o = ParseOverride("name=a=b");
  REQUIRE(o);
  CHECK(o->path == "name");
  CHECK(o->value == "a=b");

  o = ParseOverride("data.seq_len=");
  REQUIRE(o);
  CHECK(o->value.empty());

  o = ParseOverride(" cluster.device_memory = 80GiB ");
  REQUIRE(o);
  CHECK(o->path == "cluster.device_memory");
  CHECK(o->value == "80GiB");
}

TEST_CASE("ParseOverride rejects malformed keys", "[overrides]") {
  for (const char* bad : {"parallel.tensor", "=2", ".a=1", "a.=1", "a..b=1", "a b=1", "a[x]=1",
                          "a[]=1", "a[1=1", "a[-]=1", "a[--1]=1", "a[1-]=1", "a-b=1"}) {
    INFO(bad);
    CHECK_FALSE(ParseOverride(bad).has_value());
  }
}

// `--set betas[99999999999]=...` and `betas[-1]` said "expected section.key=value" (#42): the
// index is kept for the loader, which says what is wrong with it.
TEST_CASE("ParseOverride keeps an index that cannot be one", "[overrides]") {
  auto o = ParseOverride("training.optimizer.betas[99999999999]=0.9");
  REQUIRE(o);
  CHECK(o->path == "training.optimizer.betas");
  CHECK(o->index == -1);
  CHECK(o->bad_index == "99999999999");
  o = ParseOverride("training.optimizer.betas[-1]=0.9");
  REQUIRE(o);
  CHECK(o->index == -1);
  CHECK(o->bad_index == "-1");
  o = ParseOverride("training.optimizer.betas[9999]=0.9");
  REQUIRE(o);
  CHECK(o->index == 9999);
  CHECK(o->bad_index.empty());
}
