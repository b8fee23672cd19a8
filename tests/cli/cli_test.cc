// Runs the built `accel` binary and checks exit codes and output.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

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
  CHECK(r.err.find("valid, 0 invalid (0 errors, 0 warnings)\n") != std::string::npos);
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
