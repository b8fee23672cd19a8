// accel's workers under torchrun (Debian's python3-torch 1.13 ships it as
// torch.distributed.run): a plan written by `accel plan --format binpb` trains on 2 CPU workers
// that torchrun starts, both with torchrun's agent serving the store (static rendezvous,
// TORCHELASTIC_USE_AGENT_STORE) and with rank 0 serving it (--standalone). Where python3 cannot
// import torch.distributed.run the binary prints why and exits 77, which CTest reports as skipped.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/remove_tree.h"
#include "tests/common/files.h"

// Debian's interpreter, which has python3-torch (a python3 earlier on PATH may not).
#define ACCEL_PYTHON "/usr/bin/python3"

namespace accel::exec {
namespace {

namespace fs = std::filesystem;

using accel::testing::RemoveDir;

using accel::testing::ReadAll;

// A port nothing listens on right now (bound and released).
int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

fs::path WriteJob(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("accel_torchrun_" + name + "_" + std::to_string(::getpid()));
  RemoveDir(dir);
  fs::create_directories(dir);
  {
    std::ofstream corpus(dir / "corpus.txt");
    for (int i = 0; i < 400; ++i) corpus << "line " << i << ": the quick brown fox jumps.\n";
  }
  std::ofstream(dir / "job.yaml") << R"(version: 1
name: torchrun
model: {arch: gpt2, hidden_size: 32, num_layers: 2, num_heads: 2, vocab_size: 256, max_seq_len: 32}
data:
  train: {path: corpus.txt, format: text, tokenizer: bytes}
  seq_len: 16
  micro_batch_size: 4
training:
  steps: 4
  log_every_steps: 1
  sample_tokens: 0
  optimizer: {name: adamw, lr: 1.0e-3}
checkpoint: {dir: )" << (dir / "ckpt").string() << R"(, every_steps: 2, keep: 2}
cluster: {nodes: 1, devices_per_node: 2, device: cpu, device_memory: 1GiB}
)";
  return dir;
}

// Plans the job, then runs `torchrun --nproc_per_node=2 RENDEZVOUS --no_python accel worker`.
void TrainUnderTorchrun(const std::string& name, const std::string& rendezvous) {
  const fs::path dir = WriteJob(name);
  const std::string accel = ACCEL_BINARY;
  const std::string plan = "cd " + dir.string() + " && " + accel +
                           " plan job.yaml --format binpb -o plan.binpb > plan.log 2>&1";
  REQUIRE(std::system(plan.c_str()) == 0);
  const std::string run = "cd " + dir.string() +
                          " && timeout 180 " ACCEL_PYTHON " -m torch.distributed.run --nproc_per_node=2 "
                          "--redirects=1 --tee=1 " +
                          rendezvous + " --no_python " + accel +
                          " worker --plan plan.binpb > torchrun.log 2>&1";
  const int status = std::system(run.c_str());
  INFO(ReadAll(dir / "torchrun.log"));
  REQUIRE(status == 0);
  // Rank 0 writes the metrics in its working directory (no ACCEL_RUN_DIR under torchrun).
  const std::string metrics = ReadAll(dir / "metrics.jsonl");
  CHECK(std::count(metrics.begin(), metrics.end(), '\n') == 4);
  CHECK(fs::exists(dir / "ckpt" / "step_00000004" / "manifest.json"));
  RemoveDir(dir);
}

TEST_CASE("accel workers train under torchrun with its agent's store (static rendezvous)") {
  TrainUnderTorchrun("static", "--master_addr=127.0.0.1 --master_port=" + std::to_string(FreePort()));
}

TEST_CASE("accel workers train under torchrun --standalone (rank 0 serves the store)") {
  TrainUnderTorchrun("standalone", "--standalone");
}

}  // namespace
}  // namespace accel::exec

int main(int argc, char** argv) {
  if (std::system(ACCEL_PYTHON " -c 'import torch.distributed.run' > /dev/null 2>&1") != 0) {
    std::printf("SKIPPED: " ACCEL_PYTHON " cannot import torch.distributed.run (torchrun); "
                "scripts/install-deps.sh installs Debian's python3-torch\n");
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
