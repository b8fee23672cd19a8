#include "ir/pipeline_csv.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace accel::ir {
namespace {

// PyTorch's computation types for accel's op kinds (_ComputationType values).
constexpr std::pair<OpKind, std::string_view> kCsvActionTypes[] = {
    {FORWARD, "F"},           {BACKWARD, "B"},          {BACKWARD_INPUT, "I"},
    {BACKWARD_WEIGHT, "W"},   {SEND_ACTIVATION, "SEND_F"}, {RECV_ACTIVATION, "RECV_F"},
    {SEND_GRAD, "SEND_B"},    {RECV_GRAD, "RECV_B"},
};

std::string_view CsvActionType(OpKind kind) {
  for (const auto& [k, name] : kCsvActionTypes) {
    if (k == kind) return name;
  }
  return "?";
}

int32_t CsvVirtualStage(const PipelineStage& stage, int32_t chunk) {
  if (stage.chunks_size() == 0) return stage.index();
  return chunk >= 0 && chunk < stage.chunks_size() ? stage.chunks(chunk).virtual_stage() : -1;
}

// This absl predates absl::string_view being std::string_view.
absl::string_view CsvAbslView(std::string_view v) { return absl::string_view(v.data(), v.size()); }

// `text` cut at every `separator` (an empty text is one empty piece).
std::vector<std::string_view> CsvSplit(std::string_view text, char separator) {
  std::vector<std::string_view> out;
  for (size_t start = 0;;) {
    const size_t end = text.find(separator, start);
    out.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

// One parsed cell: virtual stage, kind, microbatch.
struct CsvAction {
  int32_t virtual_stage = 0;
  OpKind kind = OP_KIND_UNSPECIFIED;
  int32_t microbatch = 0;
};

absl::StatusOr<CsvAction> ParseCsvCell(std::string_view cell, const std::string& where) {
  size_t digits = 0;
  while (digits < cell.size() && std::isdigit(static_cast<unsigned char>(cell[digits]))) ++digits;
  size_t letters = digits;
  auto type_char = [&](size_t i) { return std::isupper(static_cast<unsigned char>(cell[i])) || cell[i] == '_'; };
  while (letters < cell.size() && type_char(letters)) ++letters;
  const std::string_view type = cell.substr(digits, letters - digits);
  const std::string_view microbatch = cell.substr(letters);
  const std::string text(cell);
  CsvAction action;
  const bool numbers_ok = absl::SimpleAtoi(CsvAbslView(cell.substr(0, digits)), &action.virtual_stage) &&
                          (microbatch.empty() || absl::SimpleAtoi(CsvAbslView(microbatch), &action.microbatch));
  if (digits == 0 || type.empty() || !numbers_ok || action.microbatch < 0 ||
      microbatch.find_first_not_of("0123456789") != std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": '", text, "' is not an action such as 0F0"));
  }
  for (const auto& [kind, name] : kCsvActionTypes) {
    if (name == type) action.kind = kind;
  }
  if (action.kind == OP_KIND_UNSPECIFIED) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", text,
                                                   " is not an op accel runs (F, B, I, W, SEND_F, "
                                                   "RECV_F, SEND_B, RECV_B)"));
  }
  if (microbatch.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", text, " has no microbatch"));
  }
  return action;
}

// Every virtual stage on exactly one row, 0 … n − 1 without gaps: the row of each.
absl::StatusOr<std::vector<int32_t>> CsvStageOfVirtual(const std::vector<std::vector<CsvAction>>& rows) {
  std::map<int32_t, int32_t> row_of;
  for (int32_t r = 0; r < static_cast<int32_t>(rows.size()); ++r) {
    for (const CsvAction& a : rows[static_cast<size_t>(r)]) {
      auto [it, fresh] = row_of.try_emplace(a.virtual_stage, r);
      if (!fresh && it->second != r) {
        return absl::InvalidArgumentError(absl::StrCat("virtual stage ", a.virtual_stage, " is on stages ",
                                                       it->second, " and ", r));
      }
    }
  }
  std::vector<int32_t> out;
  const int32_t last = row_of.empty() ? -1 : row_of.rbegin()->first;
  for (int32_t vs = 0; vs <= last; ++vs) {
    auto it = row_of.find(vs);
    if (it == row_of.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("virtual stages run 0 to ", last, " but ", vs, " is on no stage"));
    }
    out.push_back(it->second);
  }
  return out;
}

// The peer stage of a send or receive: the stage holding the neighbouring virtual stage.
int32_t CsvPeer(const CsvAction& a, const std::vector<int32_t>& stage_of) {
  int32_t other = -1;
  if (a.kind == RECV_ACTIVATION || a.kind == SEND_GRAD) other = a.virtual_stage - 1;
  if (a.kind == SEND_ACTIVATION || a.kind == RECV_GRAD) other = a.virtual_stage + 1;
  return other >= 0 && other < static_cast<int32_t>(stage_of.size()) ? stage_of[static_cast<size_t>(other)] : -1;
}

PipelineStage CsvStage(int32_t r, const std::vector<CsvAction>& row, const std::vector<int32_t>& stage_of) {
  PipelineStage stage;
  stage.set_index(r);
  std::vector<int32_t> mine;
  for (int32_t vs = 0; vs < static_cast<int32_t>(stage_of.size()); ++vs) {
    if (stage_of[static_cast<size_t>(vs)] == r) mine.push_back(vs);
  }
  // Several virtual stages on a row: chunks in ascending order. One: no chunks, as in the plan.
  for (size_t c = 0; mine.size() > 1 && c < mine.size(); ++c) stage.add_chunks()->set_virtual_stage(mine[c]);
  for (const CsvAction& a : row) {
    PipelineOp* op = stage.add_ops();
    op->set_kind(a.kind);
    op->set_microbatch(a.microbatch);
    op->set_peer_stage(CsvPeer(a, stage_of));
    op->set_chunk(static_cast<int32_t>(std::find(mine.begin(), mine.end(), a.virtual_stage) - mine.begin()));
  }
  return stage;
}

}  // namespace

std::string PipelineToCsv(const Pipeline& pipeline) {
  std::string out;
  for (const PipelineStage& stage : pipeline.stages()) {
    std::vector<std::string> cells;
    for (const PipelineOp& op : stage.ops()) {
      cells.push_back(absl::StrCat(CsvVirtualStage(stage, op.chunk()), std::string(CsvActionType(op.kind())),
                                   op.microbatch()));
    }
    absl::StrAppend(&out, absl::StrJoin(cells, ","), "\n");
  }
  return out;
}

absl::StatusOr<std::vector<PipelineStage>> ParsePipelineCsv(std::string_view csv) {
  std::vector<std::string_view> lines = CsvSplit(csv, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  if (lines.empty()) return absl::InvalidArgumentError("no rows");
  std::vector<std::vector<CsvAction>> rows;
  for (size_t r = 0; r < lines.size(); ++r) {
    std::string_view line = lines[r];
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::vector<CsvAction>& row = rows.emplace_back();
    int cell_number = 0;
    for (std::string_view cell : CsvSplit(line, ',')) {
      ++cell_number;
      if (cell.empty()) continue;
      const std::string where = absl::StrCat("line ", r + 1, " (stage ", r, "), cell ", cell_number);
      absl::StatusOr<CsvAction> action = ParseCsvCell(cell, where);
      if (!action.ok()) return action.status();
      row.push_back(*action);
    }
  }
  absl::StatusOr<std::vector<int32_t>> stage_of = CsvStageOfVirtual(rows);
  if (!stage_of.ok()) return stage_of.status();
  std::vector<PipelineStage> stages;
  for (int32_t r = 0; r < static_cast<int32_t>(rows.size()); ++r) {
    stages.push_back(CsvStage(r, rows[static_cast<size_t>(r)], *stage_of));
  }
  return stages;
}

}  // namespace accel::ir
