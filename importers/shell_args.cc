#include "importers/shell_args.h"

#include <cctype>
#include <map>
#include <optional>

namespace accel::importers {
namespace {

bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// A scalar variable: its expanded value, or the reference that left it unknown.
struct ShellVar {
  std::string value;
  std::string unresolved;
};

// A word as the lexer builds it: the characters, which of them came from an unquoted expansion
// (bash splits those at blanks), and the words of an array splice `${ARR[@]}`.
struct RawWord {
  std::string raw;   // as written, for keywords and assignments
  std::string text;
  std::vector<bool> splittable;
  bool quoted = false;
  bool splice = false;           // the word is one `${ARR[@]}`
  bool splice_quoted = false;
  std::vector<ShellWord> spliced;
  std::string unresolved;
  SourceLocation at;
};

enum class TokKind { kWord, kSeparator, kOpen, kClose, kEnd };

struct Token {
  TokKind kind = TokKind::kEnd;
  RawWord word;
};

// Splits `word` (an element of an array spliced unquoted, or a word with an unquoted
// expansion) at blanks, as bash's word splitting does. Columns advance within the line.
void SplitWordInto(const ShellWord& word, const std::vector<bool>* splittable,
                   std::vector<ShellWord>& out) {
  const std::string& t = word.text;
  size_t i = 0;
  const int shift = word.quoted ? 1 : 0;  // past the opening quote of an array element
  bool any = false;
  while (i < t.size()) {
    auto split_here = [&](size_t k) { return IsBlank(t[k]) && (!splittable || (*splittable)[k]); };
    while (i < t.size() && split_here(i)) ++i;
    if (i >= t.size()) break;
    size_t j = i;
    while (j < t.size() && !split_here(j)) ++j;
    ShellWord piece = word;
    piece.text = t.substr(i, j - i);
    piece.quoted = false;  // a word of an unquoted expansion is plain text
    // Of a split value only the pieces that hold a reference are unknown.
    if (piece.text.find('$') == std::string::npos) piece.unresolved.clear();
    // Within an array element the offset is a column; within a variable's value it is not.
    if (!splittable) piece.at.column += static_cast<int>(i) + shift;
    out.push_back(std::move(piece));
    any = true;
    i = j;
  }
  if (!any && word.quoted) out.push_back(word);  // "" is one empty word
}

class ShellReader {
 public:
  explicit ShellReader(std::string_view text) : t_(text) {}

  ShellArgs Read() {
    while (true) {
      std::vector<Token> statement;
      TokKind end = ReadStatement(statement);
      Execute(statement);
      if (end == TokKind::kEnd) break;
    }
    return std::move(out_);
  }

 private:
  char Peek(size_t ahead = 0) const { return pos_ + ahead < t_.size() ? t_[pos_ + ahead] : '\0'; }
  SourceLocation Here() const { return SourceLocation{line_, col_}; }
  char Take() {
    char c = t_[pos_++];
    if (c == '\n') ++line_, col_ = 1;
    else ++col_;
    return c;
  }
  bool AtEnd() const { return pos_ >= t_.size(); }

  // Skips blanks, comments and backslash-newlines; returns the next token.
  Token Next() {
    while (!AtEnd()) {
      if (IsBlank(Peek())) { Take(); continue; }
      if (Peek() == '\\' && Peek(1) == '\n') { Take(); Take(); continue; }
      if (Peek() == '#') { while (!AtEnd() && Peek() != '\n') Take(); continue; }
      break;
    }
    Token tok;
    if (AtEnd()) return tok;
    char c = Peek();
    if (c == '\n' || c == ';' || c == '&' || c == '|') {
      Take();
      if ((c == '&' || c == '|' || c == ';') && Peek() == c) Take();
      tok.kind = TokKind::kSeparator;
      return tok;
    }
    if (c == '(' || c == ')') {
      Take();
      tok.kind = c == '(' ? TokKind::kOpen : TokKind::kClose;
      return tok;
    }
    tok.kind = TokKind::kWord;
    tok.word = ReadWord();
    return tok;
  }

  // The text of a `$(...)`/`$((...))` or `${...}` starting at the `$`, up to its matching close.
  std::string Bracketed(char open, char close) {
    std::string s;
    s += Take();  // $
    int depth = 0;
    while (!AtEnd()) {
      char c = Take();
      s += c;
      if (c == open) ++depth;
      else if (c == close && --depth == 0) break;
    }
    return s;
  }

  void Append(RawWord& w, const std::string& text, bool splittable) {
    w.text += text;
    w.splittable.insert(w.splittable.end(), text.size(), splittable);
  }

  void Unresolved(RawWord& w, const std::string& ref, bool quoted) {
    if (w.unresolved.empty()) w.unresolved = ref;
    Append(w, ref, !quoted);
  }

  // Expands the inside of `${...}` (without the braces) into `w`.
  void ExpandBraced(RawWord& w, const std::string& inner, const std::string& ref, bool quoted) {
    size_t n = 0;
    while (n < inner.size() && IsNameChar(inner[n])) ++n;
    const std::string name = inner.substr(0, n);
    const std::string rest = inner.substr(n);
    if (name.empty()) return Unresolved(w, ref, quoted);
    if (rest == "[@]" || rest == "[*]") {
      auto it = arrays_.find(name);
      if (it == arrays_.end()) return Unresolved(w, ref, quoted);
      if (w.text.empty() && !w.splice) {
        w.splice = true;
        w.splice_quoted = quoted;
        w.spliced = it->second;
      } else {
        for (const ShellWord& e : it->second) Append(w, (w.text.empty() ? "" : " ") + e.text, !quoted);
      }
      return;
    }
    auto it = vars_.find(name);
    const bool set = it != vars_.end();
    if (rest.empty()) {
      if (!set || it->second.value == it->second.unresolved) return Unresolved(w, ref, quoted);
      // Partly unknown ("--master_port $((...))"): the known words stay readable after splitting.
      if (!it->second.unresolved.empty() && w.unresolved.empty()) w.unresolved = ref;
      return Append(w, it->second.value, !quoted);
    }
    // ${NAME:-default}, ${NAME-default}, ${NAME:=default}: the value when set, else the default.
    size_t op = rest[0] == ':' ? 1 : 0;
    if (op < rest.size() && (rest[op] == '-' || rest[op] == '=')) {
      if (set && it->second.unresolved.empty() && !(op == 1 && it->second.value.empty())) {
        return Append(w, it->second.value, !quoted);
      }
      if (set && !it->second.unresolved.empty()) return Unresolved(w, ref, quoted);
      std::string dflt = rest.substr(op + 1);
      if (dflt.size() >= 2 && (dflt[0] == '"' || dflt[0] == '\'') && dflt.back() == dflt[0]) {
        dflt = dflt.substr(1, dflt.size() - 2);
      }
      if (dflt.find('$') != std::string::npos) return Unresolved(w, ref, quoted);
      return Append(w, dflt, !quoted);
    }
    Unresolved(w, ref, quoted);
  }

  void ExpandDollar(RawWord& w, bool quoted) {
    if (Peek(1) == '(') {
      std::string ref = Bracketed('(', ')');
      w.raw += ref;
      return Unresolved(w, ref, quoted);
    }
    if (Peek(1) == '{') {
      std::string ref = Bracketed('{', '}');
      w.raw += ref;
      return ExpandBraced(w, ref.substr(2, ref.size() - 3), ref, quoted);
    }
    if (IsNameStart(Peek(1))) {
      std::string ref(1, Take());
      while (!AtEnd() && IsNameChar(Peek())) ref += Take();
      w.raw += ref;
      return ExpandBraced(w, ref.substr(1), ref, quoted);
    }
    if (std::isdigit(static_cast<unsigned char>(Peek(1))) || std::string_view("@*#?$!").find(Peek(1)) != std::string_view::npos) {
      std::string ref(1, Take());
      ref += Take();
      w.raw += ref;
      return Unresolved(w, ref, quoted);
    }
    w.raw += Take();
    Append(w, "$", false);
  }

  RawWord ReadWord() {
    RawWord w;
    w.at = Here();
    while (!AtEnd()) {
      char c = Peek();
      if (IsBlank(c) || c == '\n' || c == ';' || c == '&' || c == '|' || c == ')') break;
      if (c == '(') {
        if (w.raw.ends_with("=")) break;  // NAME=( starts an array
        w.raw += Take();
        Append(w, "(", false);
        continue;
      }
      if (c == '\\') {
        w.raw += Take();
        if (AtEnd()) break;
        if (Peek() == '\n') { Take(); continue; }
        char e = Take();
        w.raw += e;
        Append(w, std::string(1, e), false);
        continue;
      }
      if (c == '\'') {
        w.quoted = true;
        w.raw += Take();
        while (!AtEnd() && Peek() != '\'') {
          char e = Take();
          w.raw += e;
          Append(w, std::string(1, e), false);
        }
        if (!AtEnd()) w.raw += Take();
        continue;
      }
      if (c == '"') {
        w.quoted = true;
        w.raw += Take();
        while (!AtEnd() && Peek() != '"') {
          if (Peek() == '$') { ExpandDollar(w, true); continue; }
          if (Peek() == '\\' && std::string_view("\"\\$`\n").find(Peek(1)) != std::string_view::npos) {
            w.raw += Take();
            char e = Take();
            w.raw += e;
            if (e != '\n') Append(w, std::string(1, e), false);
            continue;
          }
          char e = Take();
          w.raw += e;
          Append(w, std::string(1, e), false);
        }
        if (!AtEnd()) w.raw += Take();
        continue;
      }
      if (c == '$') { ExpandDollar(w, false); continue; }
      w.raw += Take();
      Append(w, std::string(1, c), false);
    }
    return w;
  }

  // The words `w` expands to: an array's elements (split when unquoted), or the word split at
  // blanks that came from unquoted expansions.
  std::vector<ShellWord> Expand(const RawWord& w) const {
    std::vector<ShellWord> out;
    if (w.splice) {
      for (const ShellWord& e : w.spliced) {
        if (w.splice_quoted) out.push_back(e);
        else SplitWordInto(e, nullptr, out);
      }
      return out;
    }
    ShellWord word{w.text, w.at, w.quoted, w.unresolved};
    bool splits = false;
    for (size_t i = 0; i < w.text.size(); ++i) splits = splits || (w.splittable[i] && IsBlank(w.text[i]));
    if (!splits) {
      if (!w.text.empty() || w.quoted) out.push_back(word);
      return out;
    }
    word.quoted = false;
    SplitWordInto(word, &w.splittable, out);
    return out;
  }

  // Reads tokens up to a separator; an array assignment's elements (up to `)`) stay in it.
  TokKind ReadStatement(std::vector<Token>& statement) {
    while (true) {
      Token tok = Next();
      if (tok.kind == TokKind::kEnd || tok.kind == TokKind::kSeparator) {
        if (statement.empty() && tok.kind == TokKind::kSeparator) continue;
        return tok.kind;
      }
      statement.push_back(std::move(tok));
      if (statement.back().kind == TokKind::kOpen) ReadArrayBody(statement);
    }
  }

  void ReadArrayBody(std::vector<Token>& statement) {
    while (true) {
      Token tok = Next();
      if (tok.kind == TokKind::kEnd || tok.kind == TokKind::kClose) {
        statement.push_back(std::move(tok));
        return;
      }
      if (tok.kind == TokKind::kWord) statement.push_back(std::move(tok));
    }
  }

  bool Skipping() const {
    for (bool skip : skip_) {
      if (skip) return true;
    }
    return false;
  }

  // Handles the shell keywords that open and close branches; returns how many leading words
  // were keywords (`then cmd`, `else cmd`).
  size_t Keywords(const std::vector<Token>& s) {
    size_t i = 0;
    while (i < s.size() && s[i].kind == TokKind::kWord && !s[i].word.quoted) {
      const std::string& k = s[i].word.raw;
      if (k == "if") { skip_.push_back(false); return s.size(); }  // the condition is not read
      if (k == "case") { skip_.push_back(true); return s.size(); }
      if (k == "elif") { if (!skip_.empty()) skip_.back() = true; return s.size(); }
      if (k == "else") { if (!skip_.empty()) skip_.back() = true; ++i; continue; }
      if (k == "fi" || k == "esac") { if (!skip_.empty()) skip_.pop_back(); ++i; continue; }
      if (k == "for" || k == "while" || k == "until" || k == "function") return s.size();
      if (k == "then" || k == "do" || k == "done" || k == "{" || k == "}") { ++i; continue; }
      break;
    }
    return i;
  }

  void Execute(const std::vector<Token>& s) {
    size_t i = Keywords(s);
    if (i < s.size() && (s[i].word.raw == "export" || s[i].word.raw == "readonly")) ++i;
    if (i >= s.size()) return;
    const RawWord& first = s[i].word;
    size_t eq = first.raw.find('=');
    const bool assignment = eq != std::string::npos && eq > 0 && IsNameStart(first.raw[0]) &&
                            !first.raw.starts_with("--");
    if (assignment && i + 1 < s.size() && s[i + 1].kind == TokKind::kOpen) {
      return AssignArray(first.raw.substr(0, eq), first.raw[eq - 1] == '+', s, i + 2);
    }
    if (assignment && i + 1 == s.size()) {
      std::string name = first.raw.substr(0, first.raw[eq - 1] == '+' ? eq - 1 : eq);
      bool valid = true;
      for (char c : name) valid = valid && IsNameChar(c);
      if (valid && !Skipping()) {
        // The value is the word after `=`: the lexer expanded the whole word, name included.
        const std::string value = first.text.substr(first.text.find('=') + 1);
        vars_[name] = ShellVar{value, first.unresolved};
      }
      return;
    }
    std::vector<ShellWord> words;
    for (size_t k = i; k < s.size(); ++k) {
      if (s[k].kind != TokKind::kWord) continue;
      for (ShellWord& w : Expand(s[k].word)) words.push_back(std::move(w));
    }
    Command(words);
  }

  void AssignArray(const std::string& name_eq, bool append, const std::vector<Token>& s, size_t from) {
    const std::string name = append ? name_eq.substr(0, name_eq.size() - 1) : name_eq;
    std::vector<ShellWord> elements;
    for (size_t k = from; k < s.size(); ++k) {
      if (s[k].kind != TokKind::kWord) continue;
      const RawWord& w = s[k].word;
      if (w.splice) {
        for (const ShellWord& e : w.spliced) elements.push_back(e);
      } else {
        elements.push_back(ShellWord{w.text, w.at, w.quoted, w.unresolved});
      }
    }
    if (Skipping()) {
      std::vector<ShellWord> split;
      for (const ShellWord& e : elements) SplitWordInto(e, nullptr, split);
      Group(split, false, out_.skipped);
      return;
    }
    std::vector<ShellWord>& array = arrays_[name];
    if (!append) array.clear();
    for (ShellWord& e : elements) array.push_back(std::move(e));
  }

  // A word that is one reference the script does not set: `$X`, `${X}`, `${X[@]}`.
  static bool IsWholeReference(const ShellWord& w) { return !w.unresolved.empty() && w.text == w.unresolved; }
  static bool IsSplice(const ShellWord& w) { return w.text.ends_with("[@]}") || w.text.ends_with("[*]}"); }

  static bool IsScript(const ShellWord& w) { return w.text.ends_with(".py"); }

  void Command(const std::vector<ShellWord>& words) {
    if (words.empty()) return;
    std::vector<ShellArg>& into = Skipping() ? out_.skipped : out_.args;
    if (words[0].text.starts_with("--")) return Group(words, false, into);
    for (size_t k = 0; k < words.size(); ++k) {
      if (!IsScript(words[k])) continue;
      if (Skipping()) return Group(words, false, out_.skipped);
      out_.args.clear();
      out_.script = words[k].text;
      Group({words.begin(), words.begin() + static_cast<std::ptrdiff_t>(k)}, true, out_.args);
      Group({words.begin() + static_cast<std::ptrdiff_t>(k) + 1, words.end()}, false, out_.args);
      return;
    }
  }

  // Groups words into arguments: a word starting with `--` opens one, the next words that do not
  // are its values. `--flag=value` is split. Words before the first flag (the launcher's name,
  // `-m module`) and single-dash options are not arguments.
  static void Group(const std::vector<ShellWord>& words, bool launcher, std::vector<ShellArg>& out) {
    bool open = false;
    for (const ShellWord& w : words) {
      const std::string& t = w.text;
      const bool negative = t.size() > 1 && t[0] == '-' && (std::isdigit(static_cast<unsigned char>(t[1])) || t[1] == '.');
      if (t.starts_with("--") && t.size() > 2 && w.unresolved.empty()) {
        ShellArg arg;
        arg.launcher = launcher;
        arg.flag = w;
        size_t eq = t.find('=');
        if (eq != std::string::npos) {
          arg.flag.text = t.substr(0, eq);
          ShellWord value = w;
          value.text = t.substr(eq + 1);
          value.at.column += static_cast<int>(eq) + 1;
          arg.values.push_back(value);
        }
        out.push_back(std::move(arg));
        open = true;
      } else if (t.starts_with("-") && !negative && w.unresolved.empty()) {
        open = false;
      } else if (open && !(IsWholeReference(w) && (IsSplice(w) || !out.back().values.empty()))) {
        out.back().values.push_back(w);
      } else if (IsWholeReference(w)) {
        // A reference the script does not set, where arguments go: its contents are unknown.
        ShellArg arg;
        arg.launcher = launcher;
        arg.flag = w;
        out.push_back(std::move(arg));
      }
    }
  }

  std::string_view t_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
  std::map<std::string, ShellVar> vars_;
  std::map<std::string, std::vector<ShellWord>> arrays_;
  std::vector<bool> skip_;  // per open if/case: whether the branch being read is skipped
  ShellArgs out_;
};

}  // namespace

ShellArgs ReadShellArgs(std::string_view text) { return ShellReader(text).Read(); }

bool LooksLikeShellArgs(std::string_view text) {
  if (text.starts_with("#!")) {
    std::string_view line = text.substr(0, text.find('\n'));
    return line.find("sh") != std::string_view::npos;
  }
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    size_t i = line.find_first_not_of(" \t\r");
    if (i != std::string_view::npos && line[i] != '#') {
      // `--name`, not YAML's `---` document marker.
      return line.substr(i).starts_with("--") && i + 2 < line.size() &&
             std::isalpha(static_cast<unsigned char>(line[i + 2]));
    }
    pos = end + 1;
  }
  return false;
}

}  // namespace accel::importers
