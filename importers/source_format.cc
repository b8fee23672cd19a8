#include "importers/source_format.h"

#include <cctype>

#include "importers/shell_args.h"

namespace accel::importers {
namespace {

bool EndsWith(std::string_view text, std::string_view suffix) {
  if (text.size() < suffix.size()) return false;
  for (size_t i = 0; i < suffix.size(); ++i) {
    char c = text[text.size() - suffix.size() + i];
    if (std::tolower(static_cast<unsigned char>(c)) != suffix[i]) return false;
  }
  return true;
}

// True when some line, after leading blanks, starts with `[` followed by a key character:
// a TOML table header. YAML flow sequences at the start of a line are rare in configs.
bool HasTomlHeader(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    size_t i = line.find_first_not_of(" \t");
    if (i != std::string_view::npos && line[i] == '[' && i + 1 < line.size() &&
        (std::isalpha(static_cast<unsigned char>(line[i + 1])) || line[i + 1] == '[')) {
      return line.find(']') != std::string_view::npos;
    }
    pos = end + 1;
  }
  return false;
}

char FirstContentChar(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    char c = text[pos];
    if (c == '#') {
      size_t end = text.find('\n', pos);
      if (end == std::string_view::npos) return 0;
      pos = end + 1;
      continue;
    }
    if (!std::isspace(static_cast<unsigned char>(c))) return c;
    ++pos;
  }
  return 0;
}

}  // namespace

std::string_view FormatName(SourceFormat format) {
  switch (format) {
    case SourceFormat::kAccelerate: return "accelerate";
    case SourceFormat::kDeepSpeed: return "deepspeed";
    case SourceFormat::kTorchtitan: return "torchtitan";
    case SourceFormat::kMegatron: return "megatron";
  }
  return "accelerate";
}

std::string_view ToolName(SourceFormat format) {
  switch (format) {
    case SourceFormat::kAccelerate: return "Accelerate";
    case SourceFormat::kDeepSpeed: return "DeepSpeed";
    case SourceFormat::kTorchtitan: return "torchtitan";
    case SourceFormat::kMegatron: return "Megatron-LM";
  }
  return "Accelerate";
}

std::optional<SourceFormat> ParseFormatName(std::string_view name) {
  for (SourceFormat f :
       {SourceFormat::kAccelerate, SourceFormat::kDeepSpeed, SourceFormat::kTorchtitan,
        SourceFormat::kMegatron}) {
    if (FormatName(f) == name) return f;
  }
  return std::nullopt;
}

bool IsJsonText(std::string_view text) { return FirstContentChar(text) == '{'; }

bool IsTorchtitanJson(std::string_view text) {
  return IsJsonText(text) && (text.find("\"model_spec\"") != std::string_view::npos ||
                              text.find("\"parallelism\"") != std::string_view::npos);
}

SourceFormat DetectSourceFormat(std::string_view path, std::string_view text) {
  if (EndsWith(path, ".json")) {
    return IsTorchtitanJson(text) ? SourceFormat::kTorchtitan : SourceFormat::kDeepSpeed;
  }
  if (EndsWith(path, ".toml")) return SourceFormat::kTorchtitan;
  if (EndsWith(path, ".yaml") || EndsWith(path, ".yml")) return SourceFormat::kAccelerate;
  if (EndsWith(path, ".sh") || EndsWith(path, ".bash") || EndsWith(path, ".args")) {
    return SourceFormat::kMegatron;
  }
  if (IsJsonText(text)) return IsTorchtitanJson(text) ? SourceFormat::kTorchtitan : SourceFormat::kDeepSpeed;
  if (HasTomlHeader(text)) return SourceFormat::kTorchtitan;
  if (LooksLikeShellArgs(text)) return SourceFormat::kMegatron;
  return SourceFormat::kAccelerate;
}

}  // namespace accel::importers
