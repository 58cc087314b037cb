#include "platform/config/yaml_config.h"

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <vector>

#include "models/common/text_position.h"
#include "models/common/utf8.h"
#include "models/common/yaml_documents.h"
#include "platform/config/units.h"
#include "platform/report/identity.h"

namespace fabricsim::config {

namespace {
// Error messages are one line: control characters from values are escaped.
std::string one_line(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += ' ';
    else
      out += c;
  }
  return out;
}

// The command-line override that created `kp` or a map above it, if any.
const std::string* override_of(const Document& d, const std::string& kp) {
  auto it = d.overridden.find(kp);
  if (it != d.overridden.end()) return &it->second;
  // An unknown key inside a map that --set created: name the --set.
  for (const auto& [path, who] : d.overridden) {
    // A list one of whose items --set replaced (`--set 'x.list[0]=...'`): an
    // error about the list's items is the override's (the file's list was
    // read before without it).
    if (path.size() > kp.size() && path.compare(0, kp.size(), kp) == 0 &&
        (path[kp.size()] == '.' || path[kp.size()] == '['))
      return &who;
    // A key inside a map that --set gave as its value.
    if (kp.size() > path.size() && kp.compare(0, path.size(), path) == 0 &&
        (kp[path.size()] == '.' || kp[path.size()] == '['))
      return &who;
  }
  return nullptr;
}

}  // namespace

std::string not_a_key_path(const YAML::Node& k) {
  if (!k.IsScalar()) return k.IsNull() ? "a null key (~)" : k.IsSequence() ? "a list" : "a map";
  const std::string& s = k.Scalar();
  if (s.empty()) return "an empty key";
  if (s.front() == '.' || s.back() == '.' || s.find("..") != std::string::npos)
    return "'" + s + "' (an empty name between dots)";
  return {};
}

namespace {
// A key written without a value: the head of every such message, then what to give instead.
std::string no_value(const char* instead) {
  return std::string("has no value (a key written with nothing after it, '~' or 'null'): ") + instead;
}

std::string where(const std::string& file, const YAML::Mark& m) {
  if (m.is_null() || m.line < 0) return file;
  return fmt::format("{}:{}:{}", file, m.line + 1, m.column + 1);
}
}  // namespace

namespace {
// yaml-cpp turns every alias into a second reference to the anchored node, so
// a document is a DAG: nine levels of ten aliases make 10^9 paths in a 1 KB
// file. Walks visit each node once. yaml-cpp exposes node identity only
// through Node::is(); nodes are bucketed by their position in the text (an
// alias shares its anchor's node, hence its mark) and compared with is().
class VisitedNodes {
 public:
  /// True the first time `n` is seen.
  bool first_visit(const YAML::Node& n) {
    auto& bucket = seen_[n.Mark().pos];
    for (const auto& m : bucket)
      if (m.is(n)) return false;
    bucket.push_back(n);
    return true;
  }

 private:
  std::map<int, std::vector<YAML::Node>> seen_;
};

// yaml-cpp keeps the first of two equal keys silently: a strict config
// rejects them. Each map or list is checked once (errors name the first path
// that reaches it), so the walk is linear in the file's size.
// `marks`: name the line and column in `file` (false for a --set value,
// whose marks count in the command-line argument, and `file` is the --set).
void reject_duplicate_keys(const std::string& file, const YAML::Node& n, const std::string& path, VisitedNodes& visited,
                           bool marks = true) {
  if (!n.IsMap() && !n.IsSequence()) return;
  if (!visited.first_visit(n)) return;
  if (n.IsMap()) {
    std::set<std::string> seen;
    for (auto it = n.begin(); it != n.end(); ++it) {
      const std::string k = it->first.Scalar();
      const std::string kp = path.empty() ? k : path + "." + k;
      if (!seen.insert(k).second)
        throw ConfigError(fmt::format("{}: key '{}': duplicate key", marks ? where(file, it->first.Mark()) : file, kp));
      reject_duplicate_keys(file, it->second, kp, visited, marks);
    }
  } else {
    std::size_t i = 0;
    for (auto it = n.begin(); it != n.end(); ++it, ++i)
      reject_duplicate_keys(file, *it, fmt::format("{}[{}]", path, i), visited, marks);
  }
}

std::vector<std::pair<std::string, std::string>>& read_registry() {
  static std::vector<std::pair<std::string, std::string>> files;
  return files;
}
}  // namespace

std::string read_input_file(const std::string& path, std::size_t max_bytes, const std::string& what) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw ConfigError(fmt::format("{}: cannot open file", path));
  // Read in blocks up to the cap: a device such as /dev/zero (or a runaway
  // pipe) is an error, not an endless read; pipes (<(...)) still work.
  std::string text;
  char block[1 << 16];
  while (f.read(block, sizeof block) || f.gcount() > 0) {
    text.append(block, static_cast<std::size_t>(f.gcount()));
    if (text.size() > max_bytes)
      throw ConfigError(fmt::format("{}: more than {} MiB: not a {}", path, max_bytes >> 20, what));
  }
  return text;
}

bool is_file(const std::string& path) noexcept {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && !ec;
}

LocatedFile locate_beside(const std::filesystem::path& fabric_dir, const std::string& value) {
  const std::filesystem::path v(value);
  if (v.is_absolute()) return {is_file(value) ? value : std::string(), std::string(), false};
  const std::string beside = (fabric_dir / v).lexically_normal().string();
  if (is_file(beside)) return {beside, beside, false};
  if (is_file(value)) return {value, beside, true};
  return {std::string(), beside, false};
}

const std::vector<std::pair<std::string, std::string>>& files_read() { return read_registry(); }

void record_file_read(const std::string& path, const std::string& bytes) {
  auto& reg = read_registry();
  const std::string h = report::fnv1a64_hex(bytes);
  auto it = std::find_if(reg.begin(), reg.end(), [&](const auto& e) { return e.first == path; });
  if (it == reg.end())
    reg.emplace_back(path, h);
  else
    it->second = h;
}

void record_file_absent(const std::string& path) {
  auto& reg = read_registry();
  if (std::none_of(reg.begin(), reg.end(), [&](const auto& e) { return e.first == path; }))
    reg.emplace_back(path, kAbsentFile);
}

namespace {
// yaml-cpp's nesting limit, named (its own text is only "bad file").
std::string too_deep(const YAML::DeepRecursion& e) {
  return fmt::format("lists or maps nested more than {} levels deep (yaml-cpp's limit)", e.depth());
}
}  // namespace

Document load_document(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ConfigError(fmt::format("{}: is a directory, not a YAML file", path));
  const std::string text = read_input_file(path, 256u << 20, "configuration file");
  record_file_read(path, text);
  // YAML admits only printable characters (YAML 1.2 §5.1: tab, line feed,
  // carriage return, 0x20 and above but DEL): a control byte (a NUL of a
  // binary file) is named here, with its place, rather than in the parser's words.
  const auto control = std::find_if(text.begin(), text.end(), [](char ch) {
    const auto u = static_cast<unsigned char>(ch);
    return (u < 0x20 && u != '\t' && u != '\n' && u != '\r') || u == 0x7f;
  });
  if (control != text.end()) {
    const auto [cl, cc] = line_col(text, static_cast<std::size_t>(control - text.begin()));
    throw ConfigError(fmt::format("{}:{}:{}: control byte 0x{:02x}: not a YAML text file", path, cl, cc,
                                  static_cast<unsigned char>(*control)));
  }
  // A carriage return without a line feed (classic Mac line endings, or a
  // stray CR) is no line break to the YAML parser, which would report a
  // syntax error somewhere on "line 1".
  for (std::size_t i = text.find('\r'); i != std::string::npos; i = text.find('\r', i + 1))
    if (i + 1 == text.size() || text[i + 1] != '\n') {
      const auto [rl, rc] = line_col(text, i);
      throw ConfigError(
          fmt::format("{}:{}:{}: a carriage return (CR) without a line feed: save the file with LF "
                      "(or CRLF) line endings",
                      path, rl, rc));
    }
  // YAML text is Unicode (YAML 1.2 §5.2), and every string we read ends up
  // in result.json, which must be UTF-8: a stray byte (a Latin-1 name) is an
  // input error here, not a failure after the run.
  if (const std::size_t bad = first_invalid_utf8(text); bad != std::string::npos) {
    const auto [bl, bc] = line_col(text, bad);
    throw ConfigError(fmt::format("{}:{}:{}: byte 0x{:02x} is not UTF-8 text (save the file as UTF-8)", path, bl, bc,
                                  static_cast<unsigned char>(text[bad])));
  }
  // An XML file (an MSCCL-style schedule given to run or check) is not YAML:
  // say what it is rather than quote the parser's error at its last line.
  {
    std::size_t i = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) ++i;
    if (i < text.size() && text[i] == '<') {
      const auto [xl, xc] = line_col(text, i);
      throw ConfigError(
          fmt::format("{}:{}:{}: an XML file (an MSCCL-style schedule?), not a YAML configuration: a "
                      "schedule is named in a fabric's workload (workload.schedule)",
                      path, xl, xc));
    }
  }
  Document d;
  d.file = path;
  int second = 0;
  try {
    d.root = YAML::Load(text);
    second = second_document_line(text);
  } catch (const YAML::DeepRecursion& e) {
    throw ConfigError(fmt::format("{}: {}", where(path, e.mark), too_deep(e)));
  } catch (const YAML::Exception& e) {
    throw ConfigError(fmt::format("{}: YAML syntax error: {}", where(path, e.mark), e.msg));
  }
  if (second > 0)
    throw ConfigError(
        fmt::format("{}: holds more than one YAML document (the second begins at line {}): a "
                    "configuration file is one document; remove the '---' line or split the file",
                    path, second));
  if (!d.root.IsMap()) throw ConfigError(fmt::format("{}: top level must be a map of keys", path));
  VisitedNodes visited;
  reject_duplicate_keys(path, d.root, "", visited);
  return d;
}

namespace {

// One step of a --set path: a map key, or a list index ("links[0]").
struct PathStep {
  std::string key;  // empty for an index step
  std::size_t index = 0;
  std::string name;  // the path up to and including this step, for messages
};

// The steps of `path` (assignment `a`, for messages): map keys, each
// optionally followed by list indices. Throws ConfigError for a malformed path.
std::vector<PathStep> parse_path(const std::string& a, const std::string& path) {
  std::vector<PathStep> steps;
  std::size_t i = 0;
  std::string sofar;
  auto bad = [&](const std::string& why) { throw ConfigError(one_line(fmt::format("--set '{}': {}", a, why))); };
  while (i <= path.size()) {
    std::size_t j = path.find_first_of(".[", i);
    if (j == std::string::npos) j = path.size();
    const std::string k = path.substr(i, j - i);
    if (k.empty()) bad("empty key in path");
    if (k.find(']') != std::string::npos) bad(fmt::format("unexpected ']' in '{}'", k));
    sofar += (sofar.empty() ? "" : ".") + k;
    steps.push_back({k, 0, sofar});
    i = j;
    while (i < path.size() && path[i] == '[') {
      const std::size_t close = path.find(']', i);
      const std::string digits = close == std::string::npos ? "" : path.substr(i + 1, close - i - 1);
      if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9)
        bad("a list index is written [N] with N a whole number, as in links[0].a");
      sofar += "[" + digits + "]";
      steps.push_back({"", static_cast<std::size_t>(std::stoul(digits)), sofar});
      i = close + 1;
    }
    if (i == path.size()) break;
    if (path[i] != '.') bad(fmt::format("expected '.' after '{}'", sofar));
    ++i;
    if (i == path.size()) bad("empty key in path");
  }
  return steps;
}

// Set value `v` at `steps` below `cur` (the document root; `who` names the assignment in messages).
void set_at_path(YAML::Node cur, const std::vector<PathStep>& steps, const YAML::Node& v, const std::string& who) {
  // Walk down with node references (yaml-cpp nodes are handles); missing
  // maps on the way are created, list items must exist.
  std::string parent;  // name of `cur`, for messages
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const PathStep& st = steps[i];
    const bool last = i + 1 == steps.size();
    if (st.key.empty()) {
      if (!cur.IsSequence()) throw ConfigError(one_line(fmt::format("{}: '{}' is not a list", who, parent)));
      if (st.index >= cur.size())
        throw ConfigError(one_line(
            fmt::format("{}: '{}' has {} item(s); index {} is past the end", who, parent, cur.size(), st.index)));
      if (last) {
        cur[st.index] = v;
        break;
      }
      YAML::Node next = cur[st.index];
      cur.reset(next);
    } else {
      if (!cur.IsMap())
        throw ConfigError(one_line(
            fmt::format("{}: '{}' is not a map", who, steps[i - 1].key.empty() ? parent : steps[i - 1].key)));
      if (last) {
        cur[st.key] = v;
        break;
      }
      YAML::Node next = cur[st.key];
      if (!next.IsDefined() || next.IsNull()) {
        if (!steps[i + 1].key.empty()) {
          cur[st.key] = YAML::Node(YAML::NodeType::Map);
          next = cur[st.key];
        } else {
          throw ConfigError(one_line(fmt::format("{}: there is no list '{}' to index", who, st.name)));
        }
      }
      cur.reset(next);
    }
    parent = st.name;
  }
}

}  // namespace

void apply_overrides(Document& doc, const std::vector<std::string>& assignments, const std::string& label) {
  for (const auto& a : assignments) {
    const auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0) throw ConfigError(fmt::format("--set '{}': expected key.path=value", a));
    const std::string path = a.substr(0, eq);
    const std::string value = a.substr(eq + 1);
    const std::string who = label.empty() ? "--set " + path : label;
    if (value.find_first_not_of(" \t") == std::string::npos) throw ConfigError(fmt::format("{}: empty value", who));
    if (const std::size_t bad = first_invalid_utf8(a); bad != std::string::npos)
      throw ConfigError(fmt::format("{}: byte 0x{:02x} at position {} of '{}=...' is not UTF-8 text", who,
                                    static_cast<unsigned char>(a[bad]), bad + 1, path));
    const std::vector<PathStep> steps = parse_path(a, path);
    YAML::Node v;
    try {
      v = YAML::Load(value);
    } catch (const YAML::Exception& e) {
      // A long value is shown by its first 80 bytes; deep nesting by yaml-cpp's limit, not its "bad file".
      std::size_t cut = 80;  // (at a character boundary: the value is UTF-8)
      while (cut < value.size() && cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0u) == 0x80u) --cut;
      const std::string shown =
          value.size() > 100 ? value.substr(0, cut) + fmt::format("... ({} bytes)", value.size()) : value;
      const auto* deep = dynamic_cast<const YAML::DeepRecursion*>(&e);
      throw ConfigError(
          one_line(fmt::format("{}: cannot parse value '{}': {}", who, shown, deep ? too_deep(*deep) : e.msg)));
    }
    // As in a file: a map written twice with one key keeps the first value silently.
    VisitedNodes visited;
    reject_duplicate_keys(who, v, path, visited, false);
    set_at_path(doc.root, steps, v, who);
    doc.overridden[path] = who;
  }
}

bool assignment_sets(const std::string& assignment, const std::string& target) {
  const auto eq = assignment.find('=');
  const std::string k = assignment.substr(0, eq);
  if (k == target) return true;
  if (eq == std::string::npos || target.compare(0, k.size() + 1, k + ".") != 0) return false;
  try {
    YAML::Node v = YAML::Load(assignment.substr(eq + 1));
    std::string rest = target.substr(k.size() + 1);
    while (true) {
      const auto dot = rest.find('.');
      if (!v.IsMap()) return false;
      const YAML::Node& cv = v;
      YAML::Node next = cv[rest.substr(0, dot)];
      if (!next.IsDefined()) return false;
      if (dot == std::string::npos) return true;
      v.reset(next);
      rest = rest.substr(dot + 1);
    }
  } catch (const YAML::Exception&) {
    return false;  // a malformed value is reported where it is applied
  }
}

std::shared_ptr<Document> load_with_overrides(const std::string& path, const std::vector<std::string>& assignments,
                                              const std::string& label) {
  auto doc = std::make_shared<Document>(load_document(path));
  apply_overrides(*doc, assignments, label);
  return doc;
}

Section::Section(std::shared_ptr<const Document> doc, YAML::Node node, std::string path)
    : doc_(std::move(doc)), node_(std::move(node)), path_(std::move(path)) {}

Section root_section(std::shared_ptr<const Document> doc) {
  YAML::Node r = doc->root;
  return Section(std::move(doc), r, "");
}

std::string Section::key_path(const std::string& key) const {
  if (path_.empty()) return key;
  if (key.empty()) return path_;
  return path_ + "." + key;
}

void Section::fail(const std::string& key, const std::string& message) const {
  const std::string kp = key_path(key);
  if (const std::string* who = override_of(*doc_, kp)) {
    // Name the inner key when the override's value was a map or list.
    const bool inner = who->size() < 6 || who->compare(6, std::string::npos, kp) != 0;
    throw ConfigError(
        one_line(inner ? fmt::format("{}: key '{}': {}", *who, kp, message) : fmt::format("{}: {}", *who, message)));
  }
  YAML::Mark m = node_.Mark();
  if (!key.empty() && node_.IsMap()) {
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      if (it->first.Scalar() == key) {
        // A value-less key's null node is marked where the next token starts: name the key's line.
        m = it->second.Mark().is_null() || it->second.IsNull() ? it->first.Mark() : it->second.Mark();
        if (m.is_null() || m.line < 0) m = it->first.Mark();
        break;
      }
    }
  }
  throw ConfigError(one_line(fmt::format("{}: key '{}': {}", where(doc_->file, m), kp, message)));
}

bool Section::has(const std::string& key) const {
  const YAML::Node& cn = node_;
  return cn.IsMap() && cn[key].IsDefined();  // a key written without a value is there (and an error where read)
}

bool Section::unset(const std::string& key, const YAML::Node& n) const {
  if (!n.IsDefined()) return true;
  if (n.IsNull()) fail(key, no_value("give a value, or leave the key out for its default"));
  return false;
}

YAML::Node Section::get(const std::string& key) {
  used_.insert(key);
  if (!node_.IsMap()) return YAML::Node();
  const YAML::Node& cn = node_;  // const lookup never inserts the key
  return cn[key];
}

std::string Section::scalar(const std::string& key, const YAML::Node& n) {
  if (!n.IsScalar()) fail(key, "expected a single value");
  return n.Scalar();
}

Section Section::child(const std::string& key) {
  YAML::Node n = get(key);
  if (!n.IsDefined()) fail(key, "required section is missing");
  if (n.IsNull()) fail(key, no_value("give its map of keys"));
  if (!n.IsMap()) fail(key, "expected a map of keys");
  return Section(doc_, n, key_path(key));
}

Section Section::child_or_empty(const std::string& key) {
  YAML::Node n = get(key);
  // A map written without a value (`key:` alone, `~`, `--set key=null`) is an
  // error like any other key without one, never its defaults.
  if (n.IsDefined() && n.IsNull()) fail(key, no_value("give a map of keys, or leave the key out for its defaults"));
  if (n.IsDefined() && !n.IsMap()) fail(key, "expected a map of keys");
  return Section(doc_, n.IsDefined() ? n : YAML::Node(YAML::NodeType::Map), key_path(key));
}

std::vector<Section> Section::list(const std::string& key, bool required) {
  YAML::Node n = get(key);
  std::vector<Section> out;
  if (n.IsDefined() && n.IsNull()) fail(key, no_value("give a list, or leave the key out"));
  if (!n.IsDefined()) {
    if (required) fail(key, "required list is missing");
    return out;
  }
  if (!n.IsSequence()) fail(key, "expected a list");
  for (std::size_t i = 0; i < n.size(); ++i) {
    if (!n[i].IsMap()) fail(key, fmt::format("item {} must be a map of keys", i));
    out.emplace_back(doc_, n[i], fmt::format("{}[{}]", key_path(key), i));
  }
  return out;
}

std::vector<std::string> Section::strings(const std::string& key, const std::vector<std::string>& dflt) {
  YAML::Node n = get(key);
  if (unset(key, n)) return dflt;
  std::vector<std::string> out;
  if (n.IsScalar()) {
    out.push_back(n.Scalar());
    return out;
  }
  if (!n.IsSequence()) fail(key, "expected a list of values");
  for (std::size_t i = 0; i < n.size(); ++i) {
    if (!n[i].IsScalar()) fail(key, fmt::format("item {} must be a single value", i));
    out.push_back(n[i].Scalar());
  }
  return out;
}

std::vector<std::string> Section::assignments(const std::string& key, std::vector<int>* lines,
                                              std::vector<int>* columns) {
  YAML::Node n = get(key);
  std::vector<std::string> out;
  if (n.IsDefined() && n.IsNull()) fail(key, no_value("give a map of keys, or leave the key out for its defaults"));
  if (!n.IsDefined()) return out;
  if (!n.IsMap()) fail(key, "expected a map of key.path: value");
  for (auto it = n.begin(); it != n.end(); ++it) {
    if (const std::string why = not_a_key_path(it->first); !why.empty())
      throw ConfigError(
          fmt::format("{}: key '{}': {} is not a key path (give key.path: value, e.g. "
                      "link.window_high: 12)",
                      where(doc_->file, it->first.Mark()), key_path(key), why));
    std::string v;
    if (it->second.IsScalar()) {
      v = it->second.Scalar();
    } else {
      YAML::Emitter e;
      e << YAML::Flow << it->second;
      v = e.c_str();
    }
    out.push_back(it->first.Scalar() + "=" + v);
    if (lines) lines->push_back(it->first.Mark().line + 1);
    if (columns) columns->push_back(it->first.Mark().column + 1);
  }
  return out;
}

#define FABRICSIM_UNIT_GETTER(ret, name, parser)        \
  ret Section::name(const std::string& key, ret dflt) { \
    YAML::Node n = get(key);                            \
    if (unset(key, n)) return dflt;                     \
    try {                                               \
      return parser(scalar(key, n));                    \
    } catch (const UnitError& e) {                      \
      fail(key, e.what());                              \
    }                                                   \
  }

FABRICSIM_UNIT_GETTER(std::uint64_t, time_ps, parse_time_ps)
FABRICSIM_UNIT_GETTER(double, rate_bps, parse_rate_bps)
FABRICSIM_UNIT_GETTER(std::uint64_t, bytes, parse_bytes)
FABRICSIM_UNIT_GETTER(double, fraction, parse_fraction)
#undef FABRICSIM_UNIT_GETTER

double Section::probability(const std::string& key, double dflt) {
  const double v = number(key, dflt, -1e300, 1e300);
  if (v < 0.0 || v > 1.0) fail(key, fmt::format("probability must lie in [0, 1], got {}", v));
  return v;
}

double Section::number(const std::string& key, double dflt, double lo, double hi) {
  YAML::Node n = get(key);
  if (unset(key, n)) return dflt;
  double v;
  try {
    v = parse_number(scalar(key, n));
  } catch (const UnitError& e) {
    fail(key, e.what());
  }
  if (v < lo || v > hi) fail(key, fmt::format("value {} outside [{}, {}]", v, lo, hi));
  return v;
}

std::uint64_t Section::integer(const std::string& key, std::uint64_t dflt, std::uint64_t lo, std::uint64_t hi) {
  YAML::Node n = get(key);
  if (unset(key, n)) return dflt;
  const std::string s = scalar(key, n);
  std::uint64_t v = 0;
  try {
    v = parse_whole_number(s);
  } catch (const UnitError&) {
    fail(key, hi == ~0ULL ? fmt::format("expected a whole number in [{}, 2^64 - 1], got '{}'", lo, s)
                          : fmt::format("expected a whole number in [{}, {}], got '{}'", lo, hi, s));
  }
  if (v < lo || v > hi) fail(key, fmt::format("value {} outside [{}, {}]", v, lo, hi));
  return v;
}

bool Section::boolean(const std::string& key, bool dflt) {
  YAML::Node n = get(key);
  if (unset(key, n)) return dflt;
  const std::string s = scalar(key, n);
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  fail(key, fmt::format("expected true or false (yes / no and on / off are read the same), got '{}'", s));
}

std::string Section::string(const std::string& key, const std::string& dflt) {
  YAML::Node n = get(key);
  if (unset(key, n)) return dflt;
  return scalar(key, n);
}

std::string Section::required_string(const std::string& key) {
  YAML::Node n = get(key);
  if (!n.IsDefined()) fail(key, "required value is missing");
  unset(key, n);
  return scalar(key, n);
}

std::string Section::name(const std::string& key, const std::string& dflt) {
  const std::string v = string(key, dflt);
  const bool control =
      std::any_of(v.begin(), v.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
  if (v.empty() || v.size() > 100 || control)
    fail(key, fmt::format("a name of 1 to 100 bytes with no control character is expected (it names reports and "
                          "files), got {} bytes{}",
                          v.size(), control ? " with a control character" : ""));
  return v;
}

std::string Section::choice(const std::string& key, const std::string& dflt, const std::vector<std::string>& options) {
  const std::string v = string(key, dflt);
  for (const auto& o : options)
    if (o == v) return v;
  std::string all;
  for (const auto& o : options) all += (all.empty() ? "" : ", ") + o;
  fail(key, fmt::format("'{}' is not one of: {}", v, all));
}

void Section::finish() const {
  if (!node_.IsMap()) return;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string k = it->first.Scalar();
    if (!used_.count(k)) {
      const std::string kp = key_path(k);
      // `~:` or `null:` (a null key) and `[a]:` / `{a: b}:` (a list or map as
      // a key) name nothing this program reads; say which it is, and where:
      // inside a --set value that --set (its nodes carry no file position).
      const std::string* set_by = nullptr;  // the --set whose value holds this map
      for (const auto& [p, who] : doc_->overridden)
        if (!path_.empty() && (path_ == p || (path_.size() > p.size() && path_.compare(0, p.size(), p) == 0 &&
                                              (path_[p.size()] == '.' || path_[p.size()] == '['))))
          set_by = &who;
      const std::string at = set_by ? *set_by : where(doc_->file, it->first.Mark());
      if (!it->first.IsScalar())
        throw ConfigError(fmt::format("{}: a {} used as a key{}: keys are names (unknown key)", at,
                                      it->first.IsNull()       ? "null (~ or null)"
                                      : it->first.IsSequence() ? "list"
                                                               : "map",
                                      path_.empty() ? "" : fmt::format(" (under '{}')", path_)));
      if (k.empty())
        throw ConfigError(fmt::format("{}: an empty key ('' or \"\"){}: keys are names (unknown key)", at,
                                      path_.empty() ? "" : fmt::format(" (under '{}')", path_)));
      if (const std::string* who = override_of(*doc_, kp))
        throw ConfigError(fmt::format("{}: unknown key '{}'", *who, kp));
      throw ConfigError(fmt::format("{}: key '{}': unknown key", where(doc_->file, it->first.Mark()), kp));
    }
  }
}

std::vector<std::string> Section::unused_keys() const {
  std::vector<std::string> out;
  if (!node_.IsMap()) return out;
  for (auto it = node_.begin(); it != node_.end(); ++it)
    if (it->first.IsScalar() && !used_.count(it->first.Scalar())) out.push_back(it->first.Scalar());
  return out;
}

void finish_fabric_section(const Section& fabric, const std::string& kind) {
  // The keys of `fabric:` that each kind reads (its parser: link_config.cpp,
  // rifl_config.cpp, fabric_config.cpp, host_hardware.cpp).
  static const std::vector<std::pair<std::string, std::vector<std::string>>> kKeys = {
      {"link-pair", {"name", "kind"}},
      {"rifl-link", {"name", "kind"}},
      {"ring", {"name", "kind", "accelerators", "address_base"}},
      {"switched-pod", {"name", "kind", "accelerators", "switches", "address_base"}},
      {"explicit", {"name", "kind", "address_base"}},
      {"pcie-host",
       {"name", "kind", "quadrants", "latency", "bandwidth", "link", "host_bridges", "switches", "gpus", "host_memory",
        "address_base"}},
  };
  for (const std::string& k : fabric.unused_keys()) {
    std::string kinds;
    for (const auto& [other, keys] : kKeys)
      if (other != kind && std::find(keys.begin(), keys.end(), k) != keys.end())
        kinds += (kinds.empty() ? "" : ", ") + other;
    if (!kinds.empty())
      fabric.fail(k, fmt::format("a fabric of kind {} has no '{}' (fabric.kind is '{}'; '{}' belongs to kind {})", kind,
                                 k, kind, k, kinds));
  }
  fabric.finish();
}

std::string closest_name(const std::string& word, const std::vector<std::string>& names) {
  // Optimal string alignment distance (Damerau-Levenshtein without repeated edits of one substring).
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
      for (std::size_t j = 1; j <= b.size(); ++j) {
        const std::size_t sub = a[i - 1] == b[j - 1] ? 0 : 1;
        d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + sub});
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
          d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    return d[a.size()][b.size()];
  };
  std::string best;
  std::size_t best_d = 3;  // at most 2
  for (const auto& n : names) {
    const std::size_t dn = distance(word, n);
    if (dn < best_d && 2 * dn < word.size()) {
      best = n;
      best_d = dn;
    }
  }
  return best;
}

void Section::expect_keys(const std::vector<std::string>& known) const {
  if (!node_.IsMap()) return;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (!it->first.IsScalar() || it->first.Scalar().empty()) continue;  // finish() says what such a key is
    const std::string k = it->first.Scalar();
    if (std::find(known.begin(), known.end(), k) != known.end()) continue;
    const std::string guess = closest_name(k, known);
    const std::string hint = guess.empty() ? "" : fmt::format(" (did you mean '{}'?)", guess);
    const std::string kp = key_path(k);
    if (const std::string* who = override_of(*doc_, kp))
      throw ConfigError(fmt::format("{}: unknown key '{}'{}", *who, kp, hint));
    throw ConfigError(fmt::format("{}: key '{}': unknown key{}", where(doc_->file, it->first.Mark()), kp, hint));
  }
}

}  // namespace fabricsim::config
