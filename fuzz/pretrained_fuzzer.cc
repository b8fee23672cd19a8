// libFuzzer target: the header index of Hugging Face weights (exec::OpenPretrained), which
// `accel run` reads before launch for model.init_from, on one .safetensors file.
//
// Invariants: every indexed tensor has non-negative dimensions and exactly numel x dtype-size
// bytes, inside the file, after its header; so the executor's reads of [begin, end) stay in the
// file and build tensors of the shape given.
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstdint>
#include <fstream>
#include <string>

#include "executor/checkpoint/pretrained.h"
#include "executor/checkpoint/safetensors.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/accel_pretrained_fuzz_" +
                           std::to_string(::getpid()) + ".safetensors";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(data),
                                              static_cast<std::streamsize>(size));
  absl::StatusOr<accel::exec::PretrainedIndex> index = accel::exec::OpenPretrained(path);
  if (index.ok()) {
    for (const auto& [name, t] : *index) {
      uint64_t bytes = static_cast<uint64_t>(accel::exec::SafetensorsDtypeSize(t.dtype));
      ACCEL_FUZZ_CHECK(bytes > 0, "tensor " + name + " has unknown dtype " + t.dtype);
      for (int64_t d : t.shape) {
        ACCEL_FUZZ_CHECK(d >= 0, "tensor " + name + " has a negative dimension");
        ACCEL_FUZZ_CHECK(!__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes),
                         "tensor " + name + ": shape overflows 64 bits");
      }
      ACCEL_FUZZ_CHECK(t.begin >= 8 && t.begin <= t.end && t.end <= size,
                       "tensor " + name + "'s bytes leave the file");
      ACCEL_FUZZ_CHECK(t.end - t.begin == bytes, "tensor " + name + "'s bytes do not match its shape");
    }
  }
  ::unlink(path.c_str());
  return 0;
}
