// A worker's error names its rank once (launcher/rank_message.h; issue #42: "rank 1: rank 1:").
#include <catch2/catch.hpp>

#include "launcher/rank_message.h"

namespace accel::exec {
namespace {

TEST_CASE("a worker's error names its rank once", "[launcher]") {
  CHECK(WithRank(1, "cannot read plan p.binpb") == "rank 1: cannot read plan p.binpb");
  CHECK(WithRank(1, "rank 1: the rendezvous store at h:1 belongs to another job") ==
        "rank 1: the rendezvous store at h:1 belongs to another job");
  CHECK(WithRank(1, "rank 1 waited 300 s") == "rank 1 waited 300 s");
  CHECK(WithRank(1, "rank 10: x") == "rank 1: rank 10: x");
  CHECK(WithRank(2, "rank 1: x") == "rank 2: rank 1: x");
}

}  // namespace
}  // namespace accel::exec
