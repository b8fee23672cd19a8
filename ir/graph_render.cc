// RenderDot through Graphviz's libraries (gvc/cgraph) in this process. Built when CMake finds
// Graphviz (ACCEL_WITH_GRAPHVIZ); graph_render_unavailable.cc stands in otherwise.
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "ir/graph_export.h"

namespace accel::ir {
namespace {

// Graphviz reports through one process-wide callback; RenderDot holds graphviz_mutex while it
// is installed, so this buffer belongs to the running call.
std::mutex graphviz_mutex;
std::string* graphviz_messages = nullptr;

int CaptureGraphvizMessage(char* text) {
  if (graphviz_messages != nullptr && text != nullptr) graphviz_messages->append(text);
  return 0;
}

// Graphviz splits one message over several callbacks ("Error", ": ", text) and some messages
// over several lines; returns them as one line without the severity prefixes.
std::string Messages(const std::string& captured) {
  std::vector<std::string> parts;
  for (absl::string_view line : absl::StrSplit(captured, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    for (absl::string_view prefix : {"Error: ", "Warning: "}) absl::ConsumePrefix(&line, prefix);
    if (!line.empty()) parts.emplace_back(line);
  }
  return absl::StrJoin(parts, " ");
}

// cgraph's default ID discipline uses the address of each interned name as the object's ID,
// and orders subgraphs by ID; so cluster order, and with it the layout, depended on the heap
// (a second render in the same process came out different). This discipline numbers names in
// order of first appearance instead: even IDs for names, odd ones for anonymous objects (the
// same split as the default), all owned by one state per root graph.
struct GraphIds {
  std::map<std::string, IDTYPE, std::less<>> by_name;
  std::vector<std::string> names;  // names[k] has ID 2·(k + 1)
  IDTYPE next_anonymous = 1;
};

void* IdOpen(Agraph_t*, Agdisc_t*) { return new GraphIds(); }

long IdMap(void* state, int, char* name, IDTYPE* id, int create) {
  auto* ids = static_cast<GraphIds*>(state);
  if (name == nullptr) {
    *id = ids->next_anonymous;
    ids->next_anonymous += 2;
    return 1;
  }
  auto it = ids->by_name.find(std::string_view(name));
  if (it != ids->by_name.end()) {
    *id = it->second;
    return 1;
  }
  if (!create) return 0;
  ids->names.emplace_back(name);
  *id = 2 * static_cast<IDTYPE>(ids->names.size());
  ids->by_name.emplace(ids->names.back(), *id);
  return 1;
}

// Explicit IDs (agidnode and friends) are accepted only from the anonymous range not yet used.
long IdAlloc(void* state, int, IDTYPE id) {
  auto* ids = static_cast<GraphIds*>(state);
  if (id % 2 == 0 || id < ids->next_anonymous) return 0;
  ids->next_anonymous = id + 2;
  return 1;
}

void IdFree(void*, int, IDTYPE) {}

char* IdPrint(void* state, int, IDTYPE id) {
  auto* ids = static_cast<GraphIds*>(state);
  if (id == 0 || id % 2 != 0 || id / 2 > ids->names.size()) return nullptr;
  return ids->names[static_cast<size_t>(id / 2 - 1)].data();
}

void IdClose(void* state) { delete static_cast<GraphIds*>(state); }

void IdRegister(void*, int, void*) {}

Agiddisc_t sequential_ids = {IdOpen, IdMap, IdAlloc, IdFree, IdPrint, IdClose, IdRegister};

// Reads DOT text from memory one line per call, as the default file reader (fgets) does.
struct DotReader {
  const std::string* text;
  size_t position = 0;
};

int ReadDotLine(void* channel, char* buffer, int size) {
  auto* reader = static_cast<DotReader*>(channel);
  const std::string& text = *reader->text;
  if (size <= 0 || reader->position >= text.size()) return 0;
  size_t end = text.find('\n', reader->position);
  end = end == std::string::npos ? text.size() : end + 1;
  size_t count = std::min(end - reader->position, static_cast<size_t>(size));
  text.copy(buffer, count, reader->position);
  reader->position += count;
  return static_cast<int>(count);
}

Agiodisc_t memory_reader = {ReadDotLine, nullptr, nullptr};

// One Graphviz context for the whole process, created on first use and deliberately never
// freed: Graphviz 2.42's pango plugin keeps a static pointer to the last font name, which lives
// in the context's font dictionary, so freeing a context and making another makes the next text
// measurement read freed memory (AddressSanitizer: heap-use-after-free in textspan_size).
// Callers hold graphviz_mutex.
GVC_t* SharedContext() {
  static GVC_t* context = gvContext();
  return context;
}

// Restores Graphviz's error reporting and frees what a render allocated, on every path.
class GraphvizSession {
 public:
  GraphvizSession() : lock_(graphviz_mutex) {
    graphviz_messages = &messages_;
    previous_handler_ = agseterrf(CaptureGraphvizMessage);
    previous_level_ = agseterr(AGWARN);
    agreseterrors();
    context_ = SharedContext();
  }
  ~GraphvizSession() {
    if (graph_ != nullptr) {
      if (laid_out_) gvFreeLayout(context_, graph_);
      agclose(graph_);
    }
    agseterr(previous_level_);
    agseterrf(previous_handler_);
    graphviz_messages = nullptr;
  }
  GraphvizSession(const GraphvizSession&) = delete;
  GraphvizSession& operator=(const GraphvizSession&) = delete;

  absl::StatusOr<std::string> Render(const std::string& dot, const std::string& format) {
    if (context_ == nullptr) return absl::InternalError("Graphviz: gvContext failed");
    // agmemread with a deterministic ID discipline (see GraphIds).
    memory_reader.putstr = AgIoDisc.putstr;
    memory_reader.flush = AgIoDisc.flush;
    Agdisc_t discipline = {&AgMemDisc, &sequential_ids, &memory_reader};
    // The scanner is global and keeps what it buffered after a graph's closing brace for the
    // next read (agmemread elsewhere in the process leaves at least the final newline). Reading
    // an empty input to its end first empties it, so line numbers in messages start at 1.
    const std::string nothing;
    DotReader drain{&nothing};
    while (Agraph_t* leftover = agread(&drain, &discipline)) agclose(leftover);
    agreseterrors();
    messages_.clear();
    agreadline(1);

    DotReader reader{&dot};
    graph_ = agread(&reader, &discipline);
    // Read on to the end of the input too: that leaves the scanner empty, and a second graph in
    // the input is an error rather than something the next call would read.
    bool more_graphs = false;
    if (graph_ != nullptr && agerrors() < AGERR) {
      while (Agraph_t* extra = agread(&reader, &discipline)) {
        agclose(extra);
        more_graphs = true;
      }
    }
    if (graph_ == nullptr || agerrors() >= AGERR) {
      std::string why = Messages(messages_);
      return absl::InvalidArgumentError(
          absl::StrCat("not a DOT graph: ", why.empty() ? "no graph in the input" : why));
    }
    if (more_graphs) {
      return absl::InvalidArgumentError("DOT input holds more than one graph; expected one");
    }
    // Bad HTML-like labels and similar errors surface during layout; Graphviz then draws a
    // fallback, which must not pass for success.
    int layout = gvLayout(context_, graph_, "dot");
    laid_out_ = layout == 0;
    if (layout != 0 || agerrors() >= AGERR) {
      return absl::InvalidArgumentError(
          absl::StrCat("Graphviz dot layout failed: ", Messages(messages_)));
    }
    char* data = nullptr;
    unsigned int length = 0;
    int rc = gvRenderData(context_, graph_, format.c_str(), &data, &length);
    if (rc != 0 || data == nullptr) {
      if (data != nullptr) gvFreeRenderData(data);
      return absl::InternalError(absl::StrCat("Graphviz could not render ", format, ": ",
                                              Messages(messages_)));
    }
    std::string result(data, length);
    gvFreeRenderData(data);
    return result;
  }

 private:
  std::lock_guard<std::mutex> lock_;
  std::string messages_;
  agusererrf previous_handler_ = nullptr;
  agerrlevel_t previous_level_ = AGWARN;
  GVC_t* context_ = nullptr;
  Agraph_t* graph_ = nullptr;
  bool laid_out_ = false;
};

}  // namespace

absl::StatusOr<std::string> RenderDot(std::string_view dot, std::string_view format) {
  if (format != "svg" && format != "png") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown render format \"", std::string(format), "\"; expected \"svg\" or \"png\""));
  }
  GraphvizSession session;
  return session.Render(std::string(dot), std::string(format));
}

}  // namespace accel::ir
