#include "executor/listen_address.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace accel::exec {
namespace {

// This thread's redirect (ListenAddressScope).
struct Redirect {
  bool active = false;
  int port = 0;         // 0: any port
  int family = AF_UNSPEC;
  in_addr v4{};
  in6_addr v6{};
  int rewritten = 0;
};

thread_local Redirect t_redirect;

bool IsLoopback(const sockaddr* a) {
  if (a->sa_family == AF_INET) {
    return (ntohl(reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr) >> 24) == 127;
  }
  if (a->sa_family == AF_INET6) {
    const in6_addr& v6 = reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

// The redirected form of `addr` (len bytes) into `out`, or false when the redirect does not
// apply (another port, not a wildcard address, not IP). *impossible: an IPv4 socket asked to
// bind an IPv6 address.
bool Redirected(const Redirect& r, const sockaddr* addr, socklen_t len, sockaddr_storage& out,
                socklen_t& out_len, bool& impossible) {
  impossible = false;
  if (addr == nullptr) return false;
  if (addr->sa_family == AF_INET && len >= sizeof(sockaddr_in)) {
    sockaddr_in in;
    std::memcpy(&in, addr, sizeof in);
    if (in.sin_addr.s_addr != htonl(INADDR_ANY) || (r.port != 0 && ntohs(in.sin_port) != r.port)) return false;
    if (r.family != AF_INET) {
      impossible = true;
      return false;
    }
    in.sin_addr = r.v4;
    std::memcpy(&out, &in, sizeof in);
    out_len = sizeof in;
    return true;
  }
  if (addr->sa_family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
    sockaddr_in6 in6;
    std::memcpy(&in6, addr, sizeof in6);
    if (!IN6_IS_ADDR_UNSPECIFIED(&in6.sin6_addr) || (r.port != 0 && ntohs(in6.sin6_port) != r.port)) return false;
    if (r.family == AF_INET6) {
      in6.sin6_addr = r.v6;
    } else {
      // ::ffff:a.b.c.d (a dual-stack socket; one with IPV6_V6ONLY refuses it and the caller
      // tries its IPv4 socket next, as c10d does).
      std::memset(&in6.sin6_addr, 0, sizeof in6.sin6_addr);
      in6.sin6_addr.s6_addr[10] = 0xff;
      in6.sin6_addr.s6_addr[11] = 0xff;
      std::memcpy(&in6.sin6_addr.s6_addr[12], &r.v4, 4);
    }
    std::memcpy(&out, &in6, sizeof in6);
    out_len = sizeof in6;
    return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<std::string> StoreListenAddress(const std::string& host) {
  in_addr v4;
  in6_addr v6;
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1 || inet_pton(AF_INET6, host.c_str(), &v6) == 1) return host;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found); rc != 0 || found == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot resolve the master address ", host, ": ", rc != 0 ? gai_strerror(rc) : "no address"));
  }
  char text[INET6_ADDRSTRLEN] = {};
  const sockaddr* a = found->ai_addr;
  const void* raw = a->sa_family == AF_INET ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(a)->sin_addr)
                                            : static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr);
  const bool ok = inet_ntop(a->sa_family, raw, text, sizeof text) != nullptr;
  const bool cut_off = IsLoopback(a) && host != "localhost";
  freeaddrinfo(found);
  if (!ok) return absl::InvalidArgumentError(absl::StrCat("cannot resolve the master address ", host));
  return cut_off ? std::string() : std::string(text);
}

absl::StatusOr<std::unique_ptr<ListenAddressScope>> ListenAddressScope::Create(const std::string& address,
                                                                                int port) {
  if (t_redirect.active) return absl::InvalidArgumentError("a listen address scope is already active on this thread");
  Redirect r;
  if (inet_pton(AF_INET, address.c_str(), &r.v4) == 1) {
    r.family = AF_INET;
  } else if (inet_pton(AF_INET6, address.c_str(), &r.v6) == 1) {
    r.family = AF_INET6;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("'", address, "' is not a numeric IPv4 or IPv6 address"));
  }
  r.active = true;
  r.port = port;
  t_redirect = r;
  return std::unique_ptr<ListenAddressScope>(new ListenAddressScope());
}

ListenAddressScope::~ListenAddressScope() { t_redirect = Redirect{}; }

int ListenAddressScope::rewritten() const { return t_redirect.rewritten; }

}  // namespace accel::exec

// The interposed bind(2): the executable's definition comes first in the dynamic linker's lookup,
// so LibTorch's calls arrive here; the C library's is the next definition.
extern "C" int bind(int fd, const struct sockaddr* addr, socklen_t len) noexcept {
  using BindFn = int (*)(int, const struct sockaddr*, socklen_t);
  static const BindFn next = reinterpret_cast<BindFn>(dlsym(RTLD_NEXT, "bind"));
  if (next == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  accel::exec::Redirect& r = accel::exec::t_redirect;
  if (r.active) {
    sockaddr_storage replaced;
    socklen_t replaced_len = 0;
    bool impossible = false;
    if (accel::exec::Redirected(r, addr, len, replaced, replaced_len, impossible)) {
      r.rewritten += 1;
      return next(fd, reinterpret_cast<const sockaddr*>(&replaced), replaced_len);
    }
    if (impossible) {
      errno = EADDRNOTAVAIL;
      return -1;
    }
  }
  return next(fd, addr, len);
}
