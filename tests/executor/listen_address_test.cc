// The rendezvous store listens on the master address only (executor/listen_address.h): the
// interposed bind redirects exactly the wildcard binds of a ListenAddressScope's thread and port,
// and rank 0's TCPStore server is reachable at the master address and nowhere else.
#include "executor/listen_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

// LibTorch (communicator.h) defines a CHECK macro of its own: Catch2's must come after it.
#include "executor/communicator.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <thread>

namespace accel::exec {
namespace {

// Binds a fresh socket of `family` to the wildcard address on `port` and returns the address it
// got, as text ("" when socket or bind fails).
std::string BindWildcard(int family, int port) {
  const int fd = ::socket(family, SOCK_STREAM, 0);
  if (fd < 0) return "";
  sockaddr_storage addr{};
  socklen_t len = 0;
  if (family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&addr);
    in->sin_family = AF_INET;
    in->sin_port = htons(static_cast<uint16_t>(port));
    in->sin_addr.s_addr = htonl(INADDR_ANY);
    len = sizeof(sockaddr_in);
  } else {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&addr);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(static_cast<uint16_t>(port));
    in6->sin6_addr = in6addr_any;
    len = sizeof(sockaddr_in6);
  }
  std::string out;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) == 0) {
    sockaddr_storage bound{};
    socklen_t bound_len = sizeof bound;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &bound_len);
    char text[INET6_ADDRSTRLEN] = {};
    const void* raw = family == AF_INET ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&bound)->sin_addr)
                                        : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&bound)->sin6_addr);
    ::inet_ntop(family, raw, text, sizeof text);
    out = text;
  }
  ::close(fd);
  return out;
}

// Whether a TCP connection to host:port is accepted.
bool Connects(const char* host, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, host, &in.sin_addr);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&in), sizeof in) == 0;
  ::close(fd);
  return ok;
}

TEST_CASE("a ListenAddressScope redirects its thread's wildcard binds on its port, nothing else",
          "[rendezvous]") {
  CHECK(BindWildcard(AF_INET, 0) == "0.0.0.0");
  {
    auto scope = ListenAddressScope::Create("127.0.0.1", 0);
    REQUIRE(scope.ok());
    CHECK(BindWildcard(AF_INET, 0) == "127.0.0.1");
    // A dual-stack IPv6 socket gets the IPv4-mapped address (where the machine has IPv6).
    const std::string v6 = BindWildcard(AF_INET6, 0);
    if (!v6.empty()) CHECK(v6 == "::ffff:127.0.0.1");
    CHECK((*scope)->rewritten() == (v6.empty() ? 1 : 2));
    // Another thread is untouched.
    std::string other;
    std::thread([&other] { other = BindWildcard(AF_INET, 0); }).join();
    CHECK(other == "0.0.0.0");
    CHECK(ListenAddressScope::Create("127.0.0.1", 0).status().message() ==
          "a listen address scope is already active on this thread");
  }
  CHECK(BindWildcard(AF_INET, 0) == "0.0.0.0");
  {
    // Only the scope's port: a wildcard bind on another port passes through.
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&in), sizeof in) == 0);
    socklen_t len = sizeof in;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&in), &len);
    const int taken = ntohs(in.sin_port);
    ::close(fd);
    auto scope = ListenAddressScope::Create("127.0.0.1", taken == 65535 ? 65534 : taken + 1);
    REQUIRE(scope.ok());
    CHECK(BindWildcard(AF_INET, taken) == "0.0.0.0");
    CHECK((*scope)->rewritten() == 0);
  }
  CHECK(ListenAddressScope::Create("node001", 0).status().message() ==
        "'node001' is not a numeric IPv4 or IPv6 address");
}

TEST_CASE("the store listens on a numeric master address as given, and on every interface for a "
          "name that means loopback here only", "[rendezvous]") {
  CHECK(*StoreListenAddress("10.1.2.3") == "10.1.2.3");
  CHECK(*StoreListenAddress("fd00::7") == "fd00::7");
  CHECK(*StoreListenAddress("127.0.0.1") == "127.0.0.1");
  const std::string localhost = *StoreListenAddress("localhost");
  CHECK((localhost == "127.0.0.1" || localhost == "::1"));
  CHECK_THAT(std::string(StoreListenAddress("no-such-host.invalid").status().message()),
             Catch::StartsWith("cannot resolve the master address no-such-host.invalid: "));
  // This machine's own name: Debian maps it to 127.0.1.1 in /etc/hosts, other nodes to its
  // network address; binding the loopback one would cut them off.
  char name[256] = {};
  REQUIRE(::gethostname(name, sizeof name - 1) == 0);
  absl::StatusOr<std::string> own = StoreListenAddress(name);
  REQUIRE(own.ok());
  if (!own->empty()) CHECK_FALSE(own->rfind("127.", 0) == 0);
}

TEST_CASE("rank 0's store is reachable at the master address and not at another local address",
          "[rendezvous]") {
  RendezvousOptions options;
  options.master_addr = "127.0.0.1";
  options.master_port = 0;
  options.world_size = 1;
  options.rank = 0;
  options.timeout = std::chrono::seconds(10);
  auto rendezvous = Rendezvous::Connect(options);
  REQUIRE(rendezvous.ok());
  const int port = (*rendezvous)->Port();
  CHECK(Connects("127.0.0.1", port));
  // 127.0.0.2 is this machine too: a server bound to the wildcard address would accept it.
  CHECK_FALSE(Connects("127.0.0.2", port));
}

}  // namespace
}  // namespace accel::exec
