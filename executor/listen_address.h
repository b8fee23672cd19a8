// Binding the rendezvous store's listening socket to one address. LibTorch 1.13's c10d TCPStore
// server listens on every interface: TCPStoreOptions has no host to listen on (masterListenFd,
// which takes a socket the caller bound, arrived in PyTorch 2.1). accel narrows it by interposing
// bind(2): while a ListenAddressScope lives on the calling thread, a bind of a socket to the
// wildcard address (0.0.0.0 or ::) on the scope's port binds to the scope's address instead — an
// IPv6 socket to the IPv4-mapped form of an IPv4 address. Every other bind, on any thread, passes
// through to the C library's unchanged. The store's server binds in its constructor, on the
// thread that constructs it (c10d::detail::TCPServer::start), which is why a thread-local scope
// around that constructor reaches exactly that socket.
#ifndef ACCEL_EXECUTOR_LISTEN_ADDRESS_H_
#define ACCEL_EXECUTOR_LISTEN_ADDRESS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace accel::exec {

// Where a store server should listen, for master address `host` (a numeric IPv4/IPv6 address or
// a name). Returns the numeric address to bind, or "" when binding to it would cut the other
// nodes off: `host` is a name (not "localhost") that resolves to a loopback address on this
// machine, as Debian's /etc/hosts maps a machine's own name to 127.0.1.1. Errors:
// InvalidArgument "cannot resolve the master address HOST: REASON".
absl::StatusOr<std::string> StoreListenAddress(const std::string& host);

// Redirects this thread's wildcard binds on `port` (0: any port) to `address` (numeric, as
// StoreListenAddress returns it) until destroyed. Not nestable: one scope per thread at a time.
class ListenAddressScope {
 public:
  // Errors: InvalidArgument when `address` is not a numeric IPv4 or IPv6 address, or a scope is
  // already active on this thread.
  static absl::StatusOr<std::unique_ptr<ListenAddressScope>> Create(const std::string& address, int port);
  ~ListenAddressScope();
  ListenAddressScope(const ListenAddressScope&) = delete;
  ListenAddressScope& operator=(const ListenAddressScope&) = delete;

  // Binds this scope rewrote so far (the store's server makes one).
  int rewritten() const;

 private:
  ListenAddressScope() = default;
};

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_LISTEN_ADDRESS_H_
