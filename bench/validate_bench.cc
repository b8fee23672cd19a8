// Throughput of `accel validate`'s core: LoadJobSpec (read, YAML, typing, JSON Schema) over N
// generated spec files that differ in their values, written to a temporary directory first.
// Prints files per second on one thread.
//
// Usage: accel_validate_bench [N]   (default 1000)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "common/diagnostics.h"
#include "common/remove_tree.h"
#include "spec/loader.h"

namespace {

std::string Variant(int i) {
  const int tensor = 1 << (i % 3);
  const int nodes = 1 + i % 4;
  return "# yaml-language-server: $schema=../../schemas/accel-job.schema.json\n"
         "version: 1\n"
         "name: bench-job-" + std::to_string(i) + "\n"
         "model:\n"
         "  arch: " + std::string(i % 2 == 0 ? "gpt2" : "llama") + "\n"
         "  hidden_size: " + std::to_string(256 * (1 + i % 8)) + "\n"
         "  num_layers: " + std::to_string(4 + i % 20) + "\n"
         "  num_heads: 8\n"
         "  ffn_hidden_size: " + std::to_string(1024 * (1 + i % 8)) + "\n"
         "  vocab_size: 32000\n"
         "  max_seq_len: 2048\n"
         "data:\n"
         "  train: {path: data/train.bin, format: tokens, dtype: uint16}\n"
         "  seq_len: 1024\n"
         "  micro_batch_size: " + std::to_string(1 + i % 4) + "\n"
         "  global_batch_size: auto\n"
         "training:\n"
         "  steps: " + std::to_string(1000 + i) + "\n"
         "  optimizer: {name: adamw, lr: 3.0e-4, betas: [0.9, 0.95], weight_decay: 0.1}\n"
         "  lr_schedule: {name: cosine, warmup_steps: 100}\n"
         "  grad_clip_norm: 1.0\n"
         "precision: {params: bf16, compute: bf16, reduce: fp32}\n"
         "parallel:\n"
         "  data_replicate: auto\n"
         "  tensor: " + std::to_string(tensor) + "\n"
         "  pipeline: 1\n"
         "sharding: {stage: " + std::to_string(i % 4) + ", bucket_size: auto}\n"
         "checkpoint: {every_steps: 100, keep: 2}\n"
         "cluster:\n"
         "  nodes: " + std::to_string(nodes) + "\n"
         "  devices_per_node: 8\n"
         "  device: cuda\n"
         "  device_model: h100-80gb\n"
         "  device_memory: 80GiB\n";
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  if (n <= 0) {
    std::fprintf(stderr, "usage: accel_validate_bench [N]\n");
    return 2;
  }
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("accel_validate_bench." + std::to_string(getpid()));
  fs::create_directories(dir);
  std::vector<std::string> files;
  for (int i = 0; i < n; ++i) {
    std::string path = (dir / ("job_" + std::to_string(i) + ".yaml")).string();
    std::ofstream(path) << Variant(i);
    files.push_back(path);
  }
  // One untimed pass warms the page cache and parses the embedded schema once.
  {
    accel::DiagnosticSink sink;
    accel::SourceManager sources;
    accel::spec::LoadJobSpec(files[0], {}, sink, sources);
  }
  int invalid = 0;
  auto start = std::chrono::steady_clock::now();
  for (const std::string& file : files) {
    accel::DiagnosticSink sink;
    accel::SourceManager sources;
    accel::spec::LoadOptions options;
    options.skip_schema = std::getenv("ACCEL_BENCH_SKIP_SCHEMA") != nullptr;
    if (!accel::spec::LoadJobSpec(file, options, sink, sources)) ++invalid;
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::error_code ec;
  accel::RemoveTree(dir.string(), ec);
  std::printf("validated %d files in %.3f s: %.0f files/s (%.1f us/file), %d invalid\n", n,
              seconds, n / seconds, 1e6 * seconds / n, invalid);
  return invalid == 0 ? 0 : 1;
}
