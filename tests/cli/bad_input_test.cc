// Bad input from issue #42, through the built `accel` binary: hostile text in a spec, files that
// are not files, outputs that cannot be written, an output that is the input. Each answers with
// a clear message and exit code, never a hang, a lie or lost data.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/common/files.h"
#include "tests/common/temp_dir.h"

// A named namespace: cli_test.cc's helpers share this file's unity batch.
namespace accel_bad_input_test {

namespace fs = std::filesystem;
using accel::testing::ReadAll;
using accel::testing::TempDir;

struct Run {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `accel ARGS` from the repository root. Standard output goes to `stdout_to` (a shell
// redirection target such as "/dev/full", or "&-" to close it) or, when empty, to a file that is
// read back; standard error is always read back.
Run RunAccel(const std::string& args, const std::string& stdout_to = "") {
  TempDir capture("accel_bad_input");
  const std::string out = capture.File("out"), err = capture.File("err");
  const std::string redirect = stdout_to.empty() ? ">'" + out + "'"
                               : stdout_to == "&-" ? ">&-"
                                                   : ">'" + stdout_to + "'";
  const std::string command = "cd '" + std::string(ACCEL_SOURCE_ROOT) + "' && '" ACCEL_BINARY "' " +
                              args + " " + redirect + " 2>'" + err + "'";
  const int status = std::system(command.c_str());
  Run run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = ReadAll(out);
  run.err = ReadAll(err);
  return run;
}

// A valid job (validate and plan read no data files); `name` and `extra` lines vary it.
std::string Spec(const std::string& name_line = "name: job", const std::string& extra = "") {
  return "version: 1\n" + name_line +
         "\n"
         "model:\n"
         "  arch: gpt2\n"
         "  hidden_size: 64\n"
         "  num_layers: 2\n"
         "  num_heads: 4\n"
         "  vocab_size: 256\n"
         "  max_seq_len: 128\n" +
         extra +
         "data:\n"
         "  train: {path: corpus.txt, format: text}\n"
         "  seq_len: 64\n"
         "  micro_batch_size: 4\n"
         "training:\n"
         "  steps: 10\n"
         "cluster: {nodes: 1, devices_per_node: 2}\n";
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

const char* kGoodSpec = "examples/specs/gpt2-small_cpu2_dp.yaml";

}  // namespace accel_bad_input_test

using namespace accel_bad_input_test;

// ESC, CR and BEL in a spec's key reached the terminal, so a spec could erase its own error line
// and print a fake verdict. YAML writes them as "\e", "\r", "\a" in a double-quoted key.
TEST_CASE("bad input: control characters in a spec are escaped in text and github output",
          "[cli][bad_input]") {
  TempDir dir("accel_bad_input");
  const std::string spec = dir.File("job.yaml");
  Write(spec, Spec("name: job", "  \"x\\e[2K\\rchecked 1 file: 1 valid\\a\": 1\n"));
  Run text = RunAccel("validate '" + spec + "'");
  CHECK(text.exit_code == 1);
  CHECK(text.err.rfind(spec + ":10:3: error[E0101]: unknown key 'x\\x1b[2K\\rchecked 1 file: 1 "
                       "valid\\x07' in model\n", 0) == 0);
  CHECK(text.err.find('\x1b') == std::string::npos);
  CHECK(text.err.find('\r') == std::string::npos);
  CHECK(text.err.find('\a') == std::string::npos);
  Run github = RunAccel("validate --format github '" + spec + "'");
  CHECK(github.exit_code == 1);
  CHECK(github.out.rfind("::error file=" + spec + ",line=10,col=3,title=E0101::unknown key "
                         "'x\\x1b[2K\\rchecked 1 file: 1 valid\\x07' in model%0A", 0) == 0);
  CHECK(github.out.find('\x1b') == std::string::npos);
  // The same in a value: the invalid name is quoted with its controls escaped.
  Write(spec, Spec("name: \"\\e[1A\\rjob\\a\""));
  Run value = RunAccel("validate '" + spec + "'");
  CHECK(value.exit_code == 1);
  CHECK(value.err.rfind(spec + ":2:7: error[E0104]: invalid name \"\\x1b[1A\\rjob\\x07\": use "
                        "letters, digits, '.', '_' and '-', starting with a letter or digit\n", 0) == 0);
  Run value_github = RunAccel("validate --format github '" + spec + "'");
  CHECK(value_github.out.rfind("::error file=" + spec + ",line=2,col=7,title=E0104::invalid name "
                               "\"\\x1b[1A\\rjob\\x07\": use letters", 0) == 0);
}

// A valid spec's strings reach the plan summary and the memory report: the same escapes there.
TEST_CASE("bad input: control characters in a valid spec are escaped in plan and estimate-memory",
          "[cli][bad_input]") {
  TempDir dir("accel_bad_input");
  const std::string spec = dir.File("job.yaml");
  std::string text = Spec();
  text.replace(text.find("{path: corpus.txt,"), 18, "{path: \"x\\e[2K\\r.txt\",");
  text.replace(text.find("cluster: {"), 10, "cluster: {device_model: \"m\\e[1A\", device_memory: 8GiB, ");
  Write(spec, text);
  Run plan = RunAccel("plan '" + spec + "'");
  CHECK(plan.exit_code == 0);
  CHECK(plan.out.find("\ndata       " + dir.path() + "/x\\x1b[2K\\r.txt (text") != std::string::npos);
  CHECK(plan.out.find('\x1b') == std::string::npos);
  CHECK(plan.out.find('\r') == std::string::npos);
  Run memory = RunAccel("estimate-memory --model '" + spec + "'");
  CHECK(memory.out.find("cpu m\\x1b[1A)") != std::string::npos);
  CHECK(memory.out.find('\x1b') == std::string::npos);
}

// `accel validate FIFO` with nothing writing to it blocked forever.
TEST_CASE("bad input: a FIFO nothing writes to fails within seconds", "[cli][bad_input]") {
  TempDir dir("accel_bad_input");
  const std::string fifo = dir.File("job.yaml");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto start = std::chrono::steady_clock::now();
  Run r = RunAccel("validate '" + fifo + "'");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
  CHECK(r.exit_code == 1);
  CHECK(r.err == fifo + ": error[E0001]: cannot read file: is a FIFO and nothing wrote to it "
                        "within 3 s\nchecked 1 file: 0 valid, 1 invalid (1 error, 0 warnings)\n");
  // A pipe with a writer is read: `cat job.yaml | accel validate /dev/stdin` keeps working.
  Run piped = RunAccel("--version >/dev/null; cat " + std::string(kGoodSpec) + " | '" ACCEL_BINARY
                       "' validate /dev/stdin");
  CHECK(piped.exit_code == 0);
  Run device = RunAccel("validate /dev/zero");
  CHECK(device.exit_code == 1);
  CHECK(device.err.rfind("/dev/zero: error[E0001]: cannot read file: is a character device, not a "
                         "file or a pipe\n", 0) == 0);
}

// Writing to /dev/full or a closed standard output exited 0 with nothing written.
TEST_CASE("bad input: every write error is exit 4 with the reason", "[cli][bad_input]") {
  Run file = RunAccel(std::string("plan ") + kGoodSpec + " -o /dev/full");
  CHECK(file.exit_code == 4);
  CHECK(file.err == "error: cannot write /dev/full: No space left on device\n");
  for (const std::string& command : {std::string("plan ") + kGoodSpec,
                                    std::string("validate --format json ") + kGoodSpec,
                                    std::string("estimate-memory --model ") + kGoodSpec}) {
    INFO(command);
    Run full = RunAccel(command, "/dev/full");
    CHECK(full.exit_code == 4);
    CHECK(full.err == "error: cannot write standard output: No space left on device\n");
    Run closed = RunAccel(command, "&-");
    CHECK(closed.exit_code == 4);
    CHECK(closed.err == "error: cannot write standard output: Bad file descriptor\n");
  }
}

// `-o /proc/version` said "No such file or directory" about a file that exists.
TEST_CASE("bad input: -o where no file can be created names the directory", "[cli][bad_input]") {
  Run r = RunAccel(std::string("plan ") + kGoodSpec + " -o /proc/version");
  CHECK(r.exit_code == 4);
  if (::geteuid() == 0) {
    CHECK(r.err == "error: cannot write /proc/version: /proc does not allow creating files (No such "
                   "file or directory), and accel replaces a file by renaming a new one over it\n");
  } else {
    CHECK(r.err == "error: cannot write /proc/version: no permission to create files in /proc "
                   "(Permission denied)\n");
  }
}

// `accel import x.json -o x.json` replaced the config with the spec made from it.
TEST_CASE("bad input: an output that is the input file is refused", "[cli][bad_input]") {
  TempDir dir("accel_bad_input");
  const std::string config = dir.File("ds_config.json");
  const std::string original = "{\"train_micro_batch_size_per_gpu\": 4}\n";
  Write(config, original);
  Run same = RunAccel("import '" + config + "' -o '" + config + "'");
  CHECK(same.exit_code == 2);
  CHECK(same.err == "accel import: -o " + config + " is the file being imported (" + config +
                        "): refusing to overwrite it\n");
  CHECK(ReadAll(config) == original);
  // A hard link is the same file under another name.
  const std::string link = dir.File("link.json");
  REQUIRE(::link(config.c_str(), link.c_str()) == 0);
  CHECK(RunAccel("import '" + config + "' -o '" + link + "'").exit_code == 2);
  CHECK(ReadAll(config) == original);

  const std::string spec = dir.File("job.yaml");
  Write(spec, Spec());
  Run plan = RunAccel("plan '" + spec + "' -o '" + dir.path() + "/./job.yaml'");
  CHECK(plan.exit_code == 2);
  CHECK(plan.err == "error: -o " + dir.path() + "/./job.yaml is the job spec being planned (" +
                        spec + "): refusing to overwrite it\n");
  CHECK(ReadAll(spec) == Spec());
}

// Past max_position_embeddings the note had no line:column and named max_seq_len; a config.json
// with NaN got nlohmann's "invalid literal".
TEST_CASE("bad input: config.json limits and NaN are named as the file spells them",
          "[cli][bad_input]") {
  TempDir dir("accel_bad_input");
  const std::string config =
      fs::absolute(fs::path(ACCEL_SOURCE_ROOT) / "examples/models/gpt2-xl/config.json").lexically_normal().string();
  std::string text = Spec();
  text.replace(text.find("  arch: gpt2\n"), text.find("data:\n") - text.find("  arch: gpt2\n"),
               "  config: " + config + "\n");
  text.replace(text.find("seq_len: 64"), 11, "seq_len: 2048");
  const std::string spec = dir.File("job.yaml");
  Write(spec, text);
  Run r = RunAccel("validate '" + spec + "'");
  CHECK(r.exit_code == 1);
  CHECK(r.err == spec + ":7:12: error[E0411]: seq_len 2048 exceeds the model's n_positions 1024 (" +
                     config + ") [validate-spec]\n"
                     "   seq_len: 2048\n"
                     "            ^\n" +
                     config + ":17:18: note: n_positions set here\n"
                     "checked 1 file: 0 valid, 1 invalid (1 error, 0 warnings)\n");

  const std::string nan = dir.File("config.json");
  Write(nan, "{\"model_type\": \"gpt2\",\n \"layer_norm_epsilon\": NaN}\n");
  Run n = RunAccel("estimate-memory --model '" + nan + "'");
  CHECK(n.exit_code == 1);
  CHECK(n.err.rfind(nan + ":2:24: error[E0202]: model config is not valid JSON: NaN is not valid "
                          "JSON: JSON numbers are finite (Python's json.dump writes NaN and "
                          "Infinity unless allow_nan=False); use null or a number\n", 0) == 0);
}
