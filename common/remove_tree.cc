#include "common/remove_tree.h"

#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>

#include <cerrno>

namespace accel {
namespace {

// nftw's callback has no user pointer; the error of this thread's walk lives here.
thread_local int walk_errno = 0;

int RemoveEntry(const char* path, const struct stat*, int, struct FTW*) {
  if (::remove(path) != 0 && errno != ENOENT) {
    walk_errno = errno;
    return 1;  // stop the walk
  }
  return 0;
}

}  // namespace

void RemoveTree(const std::string& path, std::error_code& ec) {
  ec.clear();
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    if (errno != ENOENT) ec.assign(errno, std::generic_category());
    return;
  }
  walk_errno = 0;
  // FTW_DEPTH: children before their directory; FTW_PHYS: links are entries, never followed.
  const int rc = ::nftw(path.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
  if (rc != 0) ec.assign(walk_errno != 0 ? walk_errno : errno, std::generic_category());
}

}  // namespace accel
