// libFuzzer target: `accel import` of a Hugging Face Accelerate config YAML (importers/), with the
// invariants of fuzz/import_fuzz.h. Seeds: tests/testdata/corpus/configs/accelerate (fuzz/run.sh).
#include <cstddef>
#include <cstdint>

#include "fuzz/import_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return accel::fuzz::FuzzImport(data, size, accel::importers::SourceFormat::kAccelerate, "config.yaml");
}
