// libFuzzer target: the header index of Hugging Face weights (exec::PretrainedCheckpoint, as
// OpenPretrained), which `accel run` reads before launch for model.init_from, on one
// .safetensors file mapped into memory, and the mapped reads of whole tensors and of
// tensor-parallel slices that each rank makes.
//
// Invariants: every indexed tensor has non-negative dimensions and exactly numel x dtype-size
// bytes, inside the file, after its header; so the executor's reads of [begin, end) stay in the
// file and build tensors of the shape given. A whole read returns exactly the file's bytes; a
// slice read returns as many bytes as its shape holds, never more than the tensor's.
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstdint>
#include <fstream>
#include <string>

#include "checkpoint/pretrained.h"
#include "checkpoint/safetensors.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/accel_pretrained_fuzz_" +
                           std::to_string(::getpid()) + ".safetensors";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(data),
                                              static_cast<std::streamsize>(size));
  absl::StatusOr<accel::exec::PretrainedCheckpoint> checkpoint =
      accel::exec::PretrainedCheckpoint::Open(path);
  if (checkpoint.ok()) {
    const accel::exec::PretrainedIndex& index = checkpoint->index();
    for (const auto& [name, t] : index) {
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
      // The mapped reads: the whole tensor is its bytes; tensor-parallel rank 1 of 2 of every dim
      // (with 1 and 3 blocks) gets the elements of its slice, and nothing outside the file.
      absl::StatusOr<accel::exec::SafetensorsTensor> whole = checkpoint->Read(name, t);
      ACCEL_FUZZ_CHECK(whole.ok() && whole->data == std::string(reinterpret_cast<const char*>(data) + t.begin,
                                                                t.end - t.begin),
                       "tensor " + name + ": the mapped read differs from the file's bytes");
      for (int dim = 0; dim < static_cast<int>(t.shape.size()); ++dim) {
        for (int parts : {1, 3}) {
          const accel::exec::TensorSelection selection =
              accel::exec::TpSelection({dim, parts}, t.shape[dim], 1, 2);
          absl::StatusOr<accel::exec::SafetensorsTensor> part = checkpoint->Read(name, t, selection);
          ACCEL_FUZZ_CHECK(part.ok(), "tensor " + name + ": a slice read failed");
          uint64_t numel = static_cast<uint64_t>(accel::exec::SafetensorsDtypeSize(t.dtype));
          for (int64_t d : part->shape) numel *= static_cast<uint64_t>(d);
          ACCEL_FUZZ_CHECK(part->data.size() == numel && part->data.size() <= t.end - t.begin,
                           "tensor " + name + ": a slice's bytes do not match its shape");
        }
      }
    }
  }
  ::unlink(path.c_str());
  return 0;
}
