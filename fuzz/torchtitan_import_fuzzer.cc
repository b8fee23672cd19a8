// libFuzzer target: `accel import` of a torchtitan TOML job config (importers/), with the
// invariants of fuzz/import_fuzz.h. Seeds: tests/testdata/corpus/configs/torchtitan (fuzz/run.sh).
#include <cstddef>
#include <cstdint>

#include "fuzz/import_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return accel::fuzz::FuzzImport(data, size, accel::importers::SourceFormat::kTorchtitan, "config.toml");
}
