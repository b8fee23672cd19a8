// Runs the built `accel` binary and checks exit codes and output.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/searched_spec.h"
#include "common/remove_tree.h"
#include "tests/common/files.h"
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

using accel::testing::RemoveDir;

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

using accel::testing::ReadAll;

// Runs `accel ARGS` from the repository root (so example paths are relative) and captures
// stdout and stderr in temporary files.
Result Accel(const std::string& args) {
  const fs::path dir = fs::temp_directory_path();
  const std::string tag = std::to_string(getpid());
  const fs::path out = dir / ("accel_cli_test." + tag + ".out");
  const fs::path err = dir / ("accel_cli_test." + tag + ".err");
  const std::string command = "cd '" + std::string(ACCEL_SOURCE_ROOT) + "' && '" ACCEL_BINARY "' " +
                              args + " >'" + out.string() + "' 2>'" + err.string() + "'";
  int status = std::system(command.c_str());
  Result result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = ReadAll(out);
  result.err = ReadAll(err);
  fs::remove(out);
  fs::remove(err);
  return result;
}

const char* kBad = "tests/spec/bad/many_mistakes.yaml";
const char* kGood = "examples/specs/gpt2-small_cpu2_dp.yaml";

}  // namespace

// How the plan's JSON spells an enum value the search table shows in the spec's words:
// ("OFFLOAD", "optimizer") -> "OFFLOAD_OPTIMIZER" (protobuf's JSON mapping uses value names).
std::string ProtoEnum(const std::string& prefix, std::string word) {
  for (char& c : word) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return prefix + "_" + word;
}

TEST_CASE("accel --version and --help", "[cli]") {
  Result r = Accel("--version");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "accel 0.1.0\n");
  r = Accel("--help");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("validate") != std::string::npos);
  CHECK(r.out.find("schema") != std::string::npos);
  r = Accel("validate --help");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("--format") != std::string::npos);
}

TEST_CASE("usage errors exit 2", "[cli]") {
  Result r = Accel("valdate x.yaml");
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("error: unknown command 'valdate'; did you mean 'validate'?\n", 0) == 0);
  r = Accel("deploy");
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("error: unknown command 'deploy'\n", 0) == 0);
  CHECK(Accel("").exit_code == 2);
  CHECK(Accel("validate").exit_code == 2);
  CHECK(Accel(std::string("validate --format xml ") + kGood).exit_code == 2);
  CHECK(Accel(std::string("validate --frobnicate ") + kGood).exit_code == 2);
}

TEST_CASE("validate: valid files exit 0", "[cli]") {
  Result r = Accel("validate examples/specs/*.yaml");
  CHECK(r.exit_code == 0);
  CHECK(r.out.empty());
  CHECK(r.err.empty());  // a clean run prints nothing, not even the planner's notes
  r = Accel(std::string("validate --quiet ") + kGood);
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
}

TEST_CASE("validate: invalid files exit 1 with text diagnostics on stderr", "[cli]") {
  Result r = Accel(std::string("validate ") + kGood + " " + kBad);
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK(r.err.rfind(std::string(kBad) + ":5:9: error[E0106]: invalid value \"gtp2\" for "
                    "model.arch; did you mean 'gpt2'?\n   arch: gtp2\n         ^\n", 0) == 0);
  CHECK(r.err.find("checked 2 files: 1 valid, 1 invalid (5 errors, 0 warnings)\n") !=
        std::string::npos);
  Result quiet = Accel(std::string("validate -q ") + kBad);
  CHECK(quiet.exit_code == 1);
  CHECK(quiet.err.find("checked") == std::string::npos);
}

TEST_CASE("validate --set applies to the file", "[cli]") {
  Result r = Accel(std::string("validate --set training.steps=0 ") + kGood);
  CHECK(r.exit_code == 1);
  CHECK(r.err.rfind("--set training.steps=0: error[E0104]: training.steps must be at least 1, got 0\n", 0) == 0);
  CHECK(Accel(std::string("validate --set parallel.data_replicate=2 --set name=x -q ") + kGood).exit_code == 0);
}

TEST_CASE("validate --format json and github write to stdout", "[cli]") {
  Result r = Accel(std::string("validate --format json ") + kBad);
  CHECK(r.exit_code == 1);
  nlohmann::json json = nlohmann::json::parse(r.out);
  REQUIRE(json.size() == 5);
  CHECK(json[0]["code"] == "E0106");
  CHECK(json[0]["file"] == kBad);
  CHECK(json[0]["line"] == 5);
  CHECK(json[0]["column"] == 9);
  CHECK(json[0]["field"] == "model.arch");
  r = Accel(std::string("validate --format json ") + kGood);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "[]\n");
  r = Accel(std::string("validate --format github ") + kBad);
  CHECK(r.exit_code == 1);
  CHECK(r.out.rfind(std::string("::error file=") + kBad + ",line=5,col=9,title=E0106::invalid value", 0) == 0);
}

TEST_CASE("accel schema prints the embedded schema", "[cli]") {
  Result r = Accel("schema");
  CHECK(r.exit_code == 0);
  CHECK(r.out == ReadAll(fs::path(ACCEL_SOURCE_ROOT) / "schemas" / "accel-job.schema.json"));
  // It works from any directory.
  Result elsewhere;
  {
    const std::string command = "cd / && '" ACCEL_BINARY "' schema >/dev/null";
    CHECK(std::system(command.c_str()) == 0);
  }
}

namespace {

constexpr const char* kMain = "examples/specs/gpt2-small_cpu2_dp.yaml";

TEST_CASE("plan: the text summary shows mesh, stages, memory and resolved values", "[cli]") {
  Result r = Accel(std::string("plan ") + kMain);
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  for (const char* part : {"plan gpt2-small-fortunes", "mesh       pp 1 x dp_replicate 2",
                           "memory per rank", "resolved", "parallel.data_replicate = 2",
                           "leftover ranks: world size 2"}) {
    INFO(part);
    CHECK(r.out.find(part) != std::string::npos);
  }
}

TEST_CASE("plan: every output format", "[cli]") {
  Result json = Accel(std::string("plan --format json ") + kMain);
  REQUIRE(json.exit_code == 0);
  nlohmann::json parsed = nlohmann::json::parse(json.out);
  CHECK(parsed["ir_version"] == 2);
  CHECK(parsed["mesh"]["axes"].size() == 5);
  // Typed enums, written by value name.
  CHECK(parsed["precision"]["param_dtype"] == "DTYPE_FP32");
  CHECK(parsed["topology"]["device_type"] == "DEVICE_TYPE_CPU");
  CHECK(parsed["job"]["backend"] == "BACKEND_GLOO");
  Result textproto = Accel(std::string("plan --format textproto ") + kMain);
  CHECK(textproto.out.rfind("ir_version: 2\n", 0) == 0);
  Result dot = Accel(std::string("plan --format dot ") + kMain);
  CHECK(dot.out.rfind("digraph", 0) == 0);
  // torch.distributed.pipelining's schedule CSV: one row per stage, PyTorch's action strings.
  Result csv = Accel(std::string("plan --format pipeline-csv --set parallel.pipeline=2 "
                                 "--set parallel.pipeline_schedule=zbv ") + kMain);
  CHECK(csv.exit_code == 0);
  CHECK(csv.out.rfind("0F0,0SEND_F0,", 0) == 0);
  CHECK(std::count(csv.out.begin(), csv.out.end(), '\n') == 2);
  Result svg = Accel(std::string("plan --format svg ") + kMain);
  CHECK(svg.exit_code == 0);
  CHECK(svg.out.find("<svg") != std::string::npos);

  const fs::path dir = fs::temp_directory_path() / ("accel_plan_test." + std::to_string(getpid()));
  fs::create_directories(dir);
  Result png = Accel(std::string("plan --format png -o ") + (dir / "plan.png").string() + " " + kMain);
  CHECK(png.exit_code == 0);
  CHECK(ReadAll(dir / "plan.png").rfind("\x89PNG", 0) == 0);
  Result binpb = Accel(std::string("plan --format binpb -o ") + (dir / "plan.binpb").string() +
                       " " + kMain);
  CHECK(binpb.exit_code == 0);
  CHECK(fs::file_size(dir / "plan.binpb") > 100);
  // -o into a device discards the output and leaves the device (it once became a regular file);
  // -o naming a directory is refused before anything is replaced.
  Result discarded = Accel(std::string("plan -o /dev/null ") + kMain);
  CHECK(discarded.exit_code == 0);
  CHECK(fs::status("/dev/null").type() == fs::file_type::character);
  Result into_dir = Accel(std::string("plan -o ") + dir.string() + " " + kMain);
  CHECK(into_dir.exit_code == 4);
  CHECK(into_dir.err == "error: " + dir.string() + " is a directory: refusing to replace it\n");
  CHECK(fs::is_directory(dir));
  RemoveDir(dir);
}

TEST_CASE("plan: usage errors and invalid specs", "[cli]") {
  Result format = Accel(std::string("plan --format jsn ") + kMain);
  CHECK(format.exit_code == 2);
  CHECK(format.err == "error: unknown format 'jsn'; did you mean 'json'?\n");
  Result pass = Accel(std::string("plan --dump-after build_mesh ") + kMain);
  CHECK(pass.exit_code == 2);
  CHECK(pass.err == "error: unknown pass 'build_mesh'; did you mean 'build-mesh'?\n");
  Result bad = Accel(std::string("plan --set parallel.tensor=3 ") + kMain);
  CHECK(bad.exit_code == 1);
  CHECK(bad.err.find("error[E0401]: world size 2 is not divisible by dp_shard(1) * tp(3) * "
                     "pp(1) = 3, so data_replicate: auto has no integer value") !=
        std::string::npos);
  CHECK(bad.err.find("planning stopped in pass resolve-auto\n") != std::string::npos);
}

TEST_CASE("plan: --dump-after prints the plan as it was after that pass", "[cli]") {
  Result r = Accel(std::string("plan --format textproto --dump-after resolve-auto ") + kMain);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("resolved {") != std::string::npos);
  CHECK(r.out.find("ranks {") == std::string::npos);  // build-mesh has not run
}

TEST_CASE("validate: the planner's checks run too", "[cli]") {
  Result r = Accel("validate tests/planner/specs/llama-2-7b_8xa100-40gb_dp.yaml");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("error[E0501]: stage 0 needs") != std::string::npos);
}

}  // namespace

namespace {

TEST_CASE("set overrides take one value, so the spec may follow them", "[cli]") {
  // 70 steps: fewer than the spec's 50 warmup steps would warn (W0409).
  Result plan = Accel(std::string("plan --set training.steps=70 ") + kMain);
  CHECK(plan.exit_code == 0);
  CHECK(plan.out.find("70 steps") != std::string::npos);
  Result validate = Accel(std::string("validate --set training.steps=70 ") + kMain);
  CHECK(validate.exit_code == 0);
  CHECK(validate.err.empty());
}

}  // namespace

namespace {

TEST_CASE("validate: a spec over the resource limits fails at once, located", "[cli][limits]") {
  // A million nodes of 100,000 devices used to make the planner enumerate 10^11 ranks.
  Result r = Accel("validate tests/spec/bad/huge_world.yaml");
  CHECK(r.exit_code == 1);
  CHECK(r.err ==
        "tests/spec/bad/huge_world.yaml:18:18: error[E0104]: cluster.nodes must be at most 65536 "
        "(accel's limit), got 1000000\n"
        " cluster: {nodes: 1000000, devices_per_node: 100000}\n"
        "                  ^\n"
        "tests/spec/bad/huge_world.yaml:18:45: error[E0104]: cluster.devices_per_node must be at "
        "most 1024 (accel's limit), got 100000\n"
        " cluster: {nodes: 1000000, devices_per_node: 100000}\n"
        "                                             ^\n"
        "checked 1 file: 0 valid, 1 invalid (2 errors, 0 warnings)\n");
}

TEST_CASE("plan and estimate-memory run at the largest admitted world size", "[cli][limits]") {
  // Llama-2-70B, tp 8 x pp 4 on 8,192 nodes of 8 H100: 65,536 ranks, dp_shard 2,048.
  const std::string spec = "examples/specs/llama-2-70b_16x8xh100_3d.yaml";
  const std::string at_limit = " --set cluster.nodes=8192 --set data.global_batch_size=auto ";
  Result plan = Accel("plan" + at_limit + spec);
  CHECK(plan.exit_code == 0);
  CHECK(plan.out.find("8192 node(s) x 8 cuda h100-80gb (79.65 GiB each) = 65536 ranks") !=
        std::string::npos);
  Result estimate = Accel("estimate-memory" + at_limit + "--model " + spec);
  CHECK(estimate.exit_code == 0);
  CHECK(estimate.out.find("(65536 ranks, cuda h100-80gb)") != std::string::npos);
  Result over = Accel("plan --set cluster.nodes=8193 " + spec);
  CHECK(over.exit_code == 1);
  CHECK(over.out.empty());
  CHECK(over.err.rfind("--set cluster.nodes=8193: error[E0419]: world size 65544 = "
                       "cluster.nodes(8193) * cluster.devices_per_node(8) exceeds accel's limit "
                       "of 65536 ranks [validate-spec]\n", 0) == 0);
}

TEST_CASE("estimate-memory keeps --gpus and --nodes within the limits", "[cli][limits]") {
  const std::string config = "--model examples/models/gpt2-xl/config.json --zero-stage 3 ";
  Result gpus = Accel("estimate-memory " + config + "--gpus 1000000000");
  CHECK(gpus.exit_code == 2);
  CHECK(gpus.err == "error: --gpus must be at most 1024 (GPUs per node)\n");
  Result nodes = Accel("estimate-memory " + config + "--gpus 8 --nodes 9999999999");
  CHECK(nodes.exit_code == 2);
  CHECK(nodes.err == "error: --nodes must be between 1 and 65536\n");
}

TEST_CASE("with --werror, warnings are errors in validate, plan and estimate-memory", "[cli]") {
  // pipeline_microbatches without pipelining: valid, with warning W0403.
  const std::string warned = std::string("--set parallel.pipeline_microbatches=2 ") + kMain;
  const std::string warning =
      "--set parallel.pipeline_microbatches=2: warning[W0403]: pipeline_microbatches has no effect "
      "without pipeline parallelism (pipeline is 1); use data.grad_accum_steps to accumulate "
      "gradients [resolve-auto]\n";
  const std::string as_error =
      "--set parallel.pipeline_microbatches=2: error[W0403]: pipeline_microbatches has no effect "
      "without pipeline parallelism (pipeline is 1); use data.grad_accum_steps to accumulate "
      "gradients [resolve-auto]\n";

  Result validate = Accel("validate " + warned);
  CHECK(validate.exit_code == 0);
  CHECK(validate.err == warning + "checked 1 file: 1 valid, 0 invalid (0 errors, 1 warning)\n");
  Result validate_werror = Accel("validate --werror " + warned);
  CHECK(validate_werror.exit_code == 1);
  CHECK(validate_werror.err ==
        as_error + "checked 1 file: 0 valid, 1 invalid (1 error, 0 warnings)\n");
  CHECK(Accel(std::string("validate --werror ") + kMain).exit_code == 0);

  Result plan = Accel("plan " + warned);
  CHECK(plan.exit_code == 0);
  CHECK(plan.err == warning);
  Result plan_werror = Accel("plan --werror " + warned);
  CHECK(plan_werror.exit_code == 1);
  CHECK(plan_werror.out.empty());
  CHECK(plan_werror.err.rfind(as_error, 0) == 0);
  CHECK(plan_werror.err.find("no plan written: warnings are errors (--werror)\n") !=
        std::string::npos);

  const std::string estimate_args =
      std::string("--model ") + kMain + " --set parallel.pipeline_microbatches=2";
  Result estimate = Accel("estimate-memory " + estimate_args);
  CHECK(estimate.exit_code == 0);
  CHECK(estimate.err.rfind(warning, 0) == 0);
  Result estimate_werror = Accel("estimate-memory --werror " + estimate_args);
  CHECK(estimate_werror.exit_code == 1);
  CHECK(estimate_werror.out.empty());
  CHECK(estimate_werror.err.rfind(as_error, 0) == 0);

  for (const char* command : {"validate", "plan", "estimate-memory"}) {
    INFO(command);
    Result help = Accel(std::string(command) + " --help");
    CHECK(help.exit_code == 0);
    CHECK(help.out.find("--werror") != std::string::npos);
  }
}

}  // namespace

TEST_CASE("import: writes a spec that validates, warnings on stderr", "[cli][import]") {
  const fs::path out = fs::temp_directory_path() / ("accel_cli_import." + std::to_string(getpid()) + ".yaml");
  Result r = Accel("import tests/testdata/corpus/configs/accelerate/tests/test_configs/invalid_keys.yaml "
                   "--model tests/testdata/import/models/llama-tiny/config.json --data README.md -o '" +
                   out.string() + "'");
  CHECK(r.exit_code == 0);
  CHECK(r.out.empty());
  CHECK(r.err.find("invalid_keys.yaml:14:1: warning[W0701]: Accelerate key 'invalid_key'") !=
        std::string::npos);
  CHECK(r.err.find("2 warnings\n") != std::string::npos);
  std::string spec = ReadAll(out);
  CHECK(spec.find("  device: cuda  # distributed_type: NO\n") != std::string::npos);
  Result v = Accel("validate '" + out.string() + "'");
  CHECK(v.exit_code == 0);
  fs::remove(out);
}

TEST_CASE("import: --launch-dir is where torchtitan's tokenizer path starts", "[cli][import]") {
  const fs::path out = fs::temp_directory_path() / ("accel_cli_import_tt." + std::to_string(getpid()) + ".yaml");
  Result r = Accel("import tests/testdata/corpus/configs/torchtitan/2026-02_pre-refactor/torchtitan/models/qwen3/"
                   "train_configs/qwen3_0.6b.toml --model tests/testdata/import/models/llama-tiny/config.json "
                   "--launch-dir /opt/torchtitan -o '" + out.string() + "'");
  CHECK(r.exit_code == 0);
  CHECK(ReadAll(out).find("    tokenizer: /opt/torchtitan/assets/hf/Qwen3-0.6B/tokenizer.json  "
                          "# model.hf_assets_path/tokenizer.json\n") != std::string::npos);
  fs::remove(out);
}

TEST_CASE("import: a refused config exits 1 and writes nothing", "[cli][import]") {
  Result r = Accel("import tests/testdata/corpus/configs/accelerate/examples/config_yaml_templates/fp8.yaml");
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK(r.err.find("error[E0703]: Accelerate key 'mixed_precision' = \"fp8\"") != std::string::npos);
  CHECK(r.err.find("not imported: 1 error\n") != std::string::npos);
  Result usage = Accel("import x.yaml --from nemo");
  CHECK(usage.exit_code == 2);
}

TEST_CASE("import: a Megatron-LM launch script is detected and imported", "[cli][import]") {
  Result r = Accel("import tests/testdata/corpus/configs/megatron/examples/gpt3/train_gpt3_175b_distributed.sh");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("  tensor: 8  # --tensor-model-parallel-size\n") != std::string::npos);
  CHECK(r.out.find("  pipeline: 16  # --pipeline-model-parallel-size\n") != std::string::npos);
}

namespace {

// The size of mesh axis `name` in a plan's JSON (int64 fields are JSON strings).
int64_t AxisSize(const nlohmann::json& plan, const std::string& name) {
  for (const auto& axis : plan["mesh"]["axes"]) {
    if (axis["name"] == name) return std::stoll(axis["size"].get<std::string>());
  }
  return -1;
}

}  // namespace

TEST_CASE("plan --search: the table and the emitted spec round-trip", "[cli][search]") {
  const fs::path dir = fs::temp_directory_path() / ("accel_search_test." + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string emitted = (dir / "searched.yaml").string();
  Result r = Accel(std::string("plan ") + kGood + " --set cluster.devices_per_node=8 --search "
                   "--top 3 --emit-spec " + emitted);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  for (const char* part : {"layout search: gpt2-small-fortunes on 8 ranks", "rank  dr x ds x tp x pp  cp  stage",
                           "lost to #1 by", "candidates enumerated", "candidates/s)"}) {
    INFO(part);
    CHECK(r.out.find(part) != std::string::npos);
  }
  // Row 1: "   1  DRxDSxTPxPP  stage micro accum recompute ...".
  std::istringstream row(r.out.substr(r.out.find("\n   1  ") + 1));
  int64_t rank = 0, cp = 0, stage = 0, micro = 0, accum = 0;
  std::string degrees, recompute, offload;
  row >> rank >> degrees >> cp >> stage >> micro >> accum >> recompute >> offload;
  REQUIRE(rank == 1);
  int64_t dr = 0, ds = 0, tp = 0, pp = 0;
  REQUIRE(std::sscanf(degrees.c_str(), "%ldx%ldx%ldx%ld", &dr, &ds, &tp, &pp) == 4);

  Result validate = Accel("validate " + emitted);
  INFO(validate.err);
  CHECK(validate.exit_code == 0);
  Result json = Accel("plan --format json " + emitted);
  INFO(json.err);
  REQUIRE(json.exit_code == 0);
  nlohmann::json plan = nlohmann::json::parse(json.out);
  CHECK(AxisSize(plan, "dp_replicate") == dr);
  CHECK(AxisSize(plan, "dp_shard") == ds);
  CHECK(AxisSize(plan, "tp") == tp);
  CHECK(AxisSize(plan, "pp") == pp);
  CHECK(AxisSize(plan, "cp") == cp);
  CHECK(std::stoll(plan["sharding"]["stage"].get<std::string>()) == stage);
  CHECK(plan["sharding"]["offload"] == ProtoEnum("OFFLOAD", offload));
  CHECK(std::stoll(plan["batch"]["micro_batch_size"].get<std::string>()) == micro);
  CHECK(std::stoll(plan["batch"]["grad_accum_steps"].get<std::string>()) == accum);
  CHECK(std::stoll(plan["batch"]["global_batch_size"].get<std::string>()) == 128);  // 16 x 8 ranks
  CHECK(plan["training"]["recompute"] == ProtoEnum("RECOMPUTE", recompute));
  CHECK(ReadAll(emitted).find("Chosen by --search") != std::string::npos);

  // --emit-rank 2 writes the second row's layout.
  const std::string second = (dir / "second.yaml").string();
  Result r2 = Accel(std::string("plan ") + kGood + " --set cluster.devices_per_node=8 --search "
                    "--top 3 --emit-spec " + second + " --emit-rank 2");
  INFO(r2.err);
  REQUIRE(r2.exit_code == 0);
  std::istringstream row2(r2.out.substr(r2.out.find("\n   2  ") + 1));
  row2 >> rank >> degrees >> cp >> stage >> micro >> accum >> recompute >> offload;
  REQUIRE(rank == 2);
  REQUIRE(std::sscanf(degrees.c_str(), "%ldx%ldx%ldx%ld", &dr, &ds, &tp, &pp) == 4);
  Result json2 = Accel("plan --format json " + second);
  INFO(json2.err);
  REQUIRE(json2.exit_code == 0);
  nlohmann::json plan2 = nlohmann::json::parse(json2.out);
  CHECK(AxisSize(plan2, "dp_replicate") == dr);
  CHECK(AxisSize(plan2, "dp_shard") == ds);
  CHECK(AxisSize(plan2, "tp") == tp);
  CHECK(AxisSize(plan2, "pp") == pp);
  CHECK(std::stoll(plan2["sharding"]["stage"].get<std::string>()) == stage);
  CHECK(std::stoll(plan2["batch"]["micro_batch_size"].get<std::string>()) == micro);
  CHECK(plan2["training"]["recompute"] == ProtoEnum("RECOMPUTE", recompute));
  RemoveDir(dir);
}

TEST_CASE("plan --search --emit-spec: context, offload and hybrid round-trip", "[cli][search]") {
  const fs::path dir = fs::temp_directory_path() / ("accel_search_dims." + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string emitted = (dir / "searched.yaml").string();
  // 2 x 2 x 2 x 1 with cp 2 on 16 ranks, ZeRO-3 hybrid with the optimizer offloaded.
  accel::planner::Layout l;
  l.data_replicate = 2;
  l.data_shard = 2;
  l.context = 2;
  l.tensor = 2;
  l.pipeline = 1;
  l.sharding_stage = 3;
  l.micro_batch_size = 4;
  l.recompute = accel::spec::Recompute::kSelective;
  l.offload = accel::spec::Offload::kOptimizer;
  l.hybrid = true;
  const std::vector<std::string> overrides = {"cluster.devices_per_node=16"};
  auto yaml = accel::cli::SearchedSpecYaml(kGood, ReadAll(kGood), overrides, l, 64, emitted);
  REQUIRE(yaml.ok());
  {
    std::ofstream out(emitted);
    out << *yaml;
  }
  CHECK(yaml->find("#   parallel: data_replicate 2, data_shard 2, context 2, tensor 2") !=
        std::string::npos);
  CHECK(yaml->find("#   sharding.stage 3, offload optimizer, hybrid true;") != std::string::npos);
  Result json = Accel("plan --format json " + emitted);
  INFO(json.err);
  REQUIRE(json.exit_code == 0);
  nlohmann::json plan = nlohmann::json::parse(json.out);
  CHECK(AxisSize(plan, "dp_replicate") == 2);
  CHECK(AxisSize(plan, "dp_shard") == 2);
  CHECK(AxisSize(plan, "cp") == 2);
  CHECK(AxisSize(plan, "tp") == 2);
  CHECK(AxisSize(plan, "pp") == 1);
  CHECK(std::stoll(plan["sharding"]["stage"].get<std::string>()) == 3);
  CHECK(plan["sharding"]["offload"] == "OFFLOAD_OPTIMIZER");
  CHECK(plan["sharding"]["hybrid"] == true);
  CHECK(std::stoll(plan["batch"]["micro_batch_size"].get<std::string>()) == 4);
  CHECK(std::stoll(plan["batch"]["global_batch_size"].get<std::string>()) == 64);
  CHECK(plan["training"]["recompute"] == "RECOMPUTE_SELECTIVE");
  RemoveDir(dir);
}

// The context degree (cp) column of every ranked row of a search table.
std::vector<int> ContextColumn(const std::string& table) {
  std::vector<int> cps;
  std::istringstream lines(table);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    int rank = 0, cp = 0;
    std::string degrees;
    if (!(fields >> rank >> degrees) || degrees.find('x') == std::string::npos) continue;
    // A mixture-of-experts layout names its expert degree after the others ("1x4x1x2 ep4").
    if (fields.peek() == ' ' && (fields >> std::ws).peek() == 'e') fields >> degrees;
    if (fields >> cp) cps.push_back(cp);
  }
  return cps;
}

TEST_CASE("plan --search ranks only what the executor runs, --forecast adds context parallel",
          "[cli][search]") {
  // The executor runs context parallelism, but not beside mixture-of-experts blocks (E0601): the
  // search of an MoE job leaves cp > 1 out unless --forecast asks for what it does not run yet.
  const std::string search = "plan examples/specs/moe-mini_cpu4_ep.yaml --set cluster.devices_per_node=8 --search --top 500";
  Result runnable = Accel(search);
  INFO(runnable.err);
  REQUIRE(runnable.exit_code == 0);
  const std::vector<int> cps = ContextColumn(runnable.out);
  REQUIRE_FALSE(cps.empty());
  for (int cp : cps) CHECK(cp == 1);
  CHECK(runnable.out.find(" refused (the executor does not run them yet; --forecast ranks them)") !=
        std::string::npos);
  Result forecast = Accel(search + " --forecast");
  REQUIRE(forecast.exit_code == 0);
  const std::vector<int> all = ContextColumn(forecast.out);
  CHECK(std::count_if(all.begin(), all.end(), [](int cp) { return cp > 1; }) > 0);
  CHECK(forecast.out.find("refused") == std::string::npos);
  Result alone = Accel(std::string("plan ") + kGood + " --forecast");
  CHECK(alone.exit_code == 2);
  CHECK(alone.err == "error: --forecast needs --search\n");
}

TEST_CASE("plan --search: usage errors", "[cli][search]") {
  Result top = Accel(std::string("plan ") + kGood + " --search --top 0");
  CHECK(top.exit_code == 2);
  CHECK(top.err == "error: --top must be at least 1, got 0\n");
  Result emit = Accel(std::string("plan ") + kGood + " --emit-spec out.yaml");
  CHECK(emit.exit_code == 2);
  CHECK(emit.err == "error: --emit-spec needs --search\n");
  Result rank_alone = Accel(std::string("plan ") + kGood + " --search --emit-rank 2");
  CHECK(rank_alone.exit_code == 2);
  CHECK(rank_alone.err == "error: --emit-rank needs --emit-spec\n");
  Result rank_zero = Accel(std::string("plan ") + kGood + " --search --emit-spec x.yaml --emit-rank 0");
  CHECK(rank_zero.exit_code == 2);
  CHECK(rank_zero.err == "error: --emit-rank must be at least 1, got 0\n");
  Result rank_high = Accel(std::string("plan ") + kGood +
                           " --set cluster.devices_per_node=1 --search --emit-spec x.yaml --emit-rank 100000");
  CHECK(rank_high.exit_code == 2);
  CHECK_THAT(rank_high.err, Catch::StartsWith("error: --emit-rank 100000 but only "));
  CHECK_FALSE(fs::exists("x.yaml"));
  Result top_alone = Accel(std::string("plan ") + kGood + " --top 3");
  CHECK(top_alone.exit_code == 2);
  CHECK(top_alone.err == "error: --top needs --search\n");
  Result format = Accel(std::string("plan ") + kGood + " --search --format json");
  CHECK(format.exit_code == 2);
  CHECK(format.err == "error: --search prints a table (text, or html with the winner's plan): "
                      "--format json cannot be used with it\n");
}

TEST_CASE("plan --search --emit-spec rewrites relative paths for the new directory", "[cli][search]") {
  const fs::path dir = fs::temp_directory_path() / ("accel_search_paths." + std::to_string(getpid()));
  fs::create_directories(dir / "sub");
  const std::string emitted = (dir / "sub" / "searched.yaml").string();
  // model.config is ../models/gpt2-xl/config.json relative to examples/specs/.
  Result r = Accel("plan examples/specs/gpt2-xl_8xh100_zero3.yaml --search --top 1 --emit-spec " +
                   emitted);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  Result json = Accel("plan --format json " + emitted);
  INFO(json.err);
  REQUIRE(json.exit_code == 0);
  nlohmann::json plan = nlohmann::json::parse(json.out);
  CHECK(std::stoll(plan["model"]["num_layers"].get<std::string>()) == 48);  // from config.json
  CHECK(std::stoll(plan["model"]["hidden_size"].get<std::string>()) == 1600);
  RemoveDir(dir);
}
