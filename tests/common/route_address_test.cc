// LocalAddressToward: the local end of the route to a host, as Gloo must listen on it.
#include "common/route_address.h"

#include <catch2/catch.hpp>

namespace accel {
namespace {

TEST_CASE("the route to a loopback address leaves from loopback") {
  absl::StatusOr<std::string> local = LocalAddressToward("127.0.0.1");
  REQUIRE(local.ok());
  CHECK(*local == "127.0.0.1");
  // Any 127/8 address is on the loopback interface: the route leaves from loopback (Linux picks
  // lo's primary 127.0.0.1), which is why workers keep LibTorch's choice for such masters.
  local = LocalAddressToward("127.0.1.1");
  REQUIRE(local.ok());
  CHECK_THAT(*local, Catch::StartsWith("127."));
}

TEST_CASE("a host that does not resolve is named in the error") {
  // .invalid never resolves (RFC 2606).
  absl::StatusOr<std::string> local = LocalAddressToward("accel-no-such-host.invalid");
  REQUIRE_FALSE(local.ok());
  CHECK(local.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(local.status().message()), Catch::StartsWith("cannot resolve accel-no-such-host.invalid: "));
}

}  // namespace
}  // namespace accel
