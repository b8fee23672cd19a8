// Helpers shared by the libFuzzer targets in fuzz/: invariant checks that abort (so libFuzzer
// records the input as a crash), and a private scratch directory for targets whose reader takes a
// path rather than bytes.
#ifndef ACCEL_FUZZ_FUZZ_UTIL_H_
#define ACCEL_FUZZ_FUZZ_UTIL_H_

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace accel::fuzz {

// A broken invariant is a bug in accel: print it and abort.
[[noreturn]] inline void Fail(const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", file, line, what.c_str());
  std::abort();
}

#define ACCEL_FUZZ_CHECK(condition, message)                                  \
  do {                                                                        \
    if (!(condition)) ::accel::fuzz::Fail(__FILE__, __LINE__, (message));     \
  } while (false)

// A directory of this process's own, created on first use under $TMPDIR (or /tmp) and removed at
// exit. Each target writes its input there as the file(s) its reader expects.
inline const std::string& ScratchDir() {
  static const std::string* dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                          "/accel-fuzz-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) Fail(__FILE__, __LINE__, "mkdtemp " + pattern);
    auto* path = new std::string(pattern);
    std::atexit([] { std::system(("rm -rf '" + ScratchDir() + "'").c_str()); });
    return path;
  }();
  return *dir;
}

// Writes bytes to path, replacing it; aborts on failure (the harness, not accel, is broken then).
inline void WriteFileOrDie(const std::string& path, std::string_view bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) Fail(__FILE__, __LINE__, "cannot write " + path);
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
    Fail(__FILE__, __LINE__, "short write " + path);
  }
  std::fclose(f);
}

// Splits data at every occurrence of separator (at most max_parts parts; the last keeps the rest).
inline std::vector<std::string_view> Split(std::string_view data, std::string_view separator,
                                           size_t max_parts) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < max_parts) {
    size_t at = data.find(separator);
    if (at == std::string_view::npos) break;
    parts.push_back(data.substr(0, at));
    data.remove_prefix(at + separator.size());
  }
  parts.push_back(data);
  return parts;
}

}  // namespace accel::fuzz

#endif  // ACCEL_FUZZ_FUZZ_UTIL_H_
