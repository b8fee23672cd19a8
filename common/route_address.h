// The local address this machine would use to reach a host: the interface a multi-node job's
// traffic leaves from, which Gloo must listen on. Resolving the machine's own host name (what
// LibTorch 1.13's ProcessGroupGloo::createDefaultDevice does) gives 127.0.1.1 on a default Debian
// install, where the peers cannot connect.
#ifndef ACCEL_COMMON_ROUTE_ADDRESS_H_
#define ACCEL_COMMON_ROUTE_ADDRESS_H_

#include <string>

#include "absl/status/statusor.h"

namespace accel {

// The numeric address (IPv4 "10.0.0.2", or IPv6) of the local end of a route to `host` (a name or
// an address), found as the kernel picks it: a UDP socket connected to host (no packet is sent)
// and getsockname. Errors: InvalidArgument "cannot resolve HOST: REASON"; Unavailable "no route to
// HOST: REASON" (no interface reaches it).
absl::StatusOr<std::string> LocalAddressToward(const std::string& host);

}  // namespace accel

#endif  // ACCEL_COMMON_ROUTE_ADDRESS_H_
