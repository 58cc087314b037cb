#include "sw/schedule.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>
#include <pugixml.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

#include "models/common/text_position.h"
#include "models/common/utf8.h"
#include "models/common/yaml_documents.h"

namespace fabricsim::sw {

namespace {

[[noreturn]] void fail(const std::string& file, int line, const std::string& what) {
  throw ScheduleError(file + ":" + std::to_string(line) + ": " + what);
}

std::string hex_byte(unsigned char b) {
  static const char* const digits = "0123456789abcdef";
  return {digits[b >> 4], digits[b & 15]};
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// MSCCL `coll` names (and ours) -> Op.
bool parse_coll(const std::string& name, Op& op) {
  const std::string n = lower(name);
  if (n == "allreduce")
    op = Op::allreduce;
  else if (n == "allgather")
    op = Op::allgather;
  else if (n == "reducescatter" || n == "reduce_scatter")
    op = Op::reduce_scatter;
  else if (n == "alltoall")
    op = Op::alltoall;
  else if (n == "broadcast")
    op = Op::broadcast;
  else if (n == "custom")
    op = Op::custom;
  else
    return false;
  return true;
}
const char* kColls = "allreduce, allgather, reducescatter, alltoall, broadcast, custom";

bool parse_buf(const std::string& n, Buf& b) {
  if (n == "i")
    b = Buf::input;
  else if (n == "o")
    b = Buf::output;
  else if (n == "s")
    b = Buf::scratch;
  else
    return false;
  return true;
}

bool parse_int(const std::string& t, long long& v) {
  if (t.empty()) return false;
  std::size_t pos = 0;
  try {
    v = std::stoll(t, &pos);
  } catch (...) {
    return false;
  }
  return pos == t.size();
}

// A whole number too large for parse_int ("99999999999999999999"): said as
// out of range, not as "not an integer".
bool overflowing_int(const std::string& t) {
  const std::size_t b = !t.empty() && (t[0] == '-' || t[0] == '+') ? 1 : 0;
  return t.size() > b && t.find_first_not_of("0123456789", b) == std::string::npos;
}

// ---- MSCCL XML ---------------------------------------------------------------

class XmlReader {
 public:
  XmlReader(const std::string& text, std::string file) : file_(std::move(file)) {
    line_starts_.push_back(0);
    for (std::size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') line_starts_.push_back(i + 1);
  }
  int line_of(std::ptrdiff_t offset) const {
    if (offset < 0) return 0;
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), static_cast<std::size_t>(offset));
    return static_cast<int>(it - line_starts_.begin());
  }
  int line(const pugi::xml_node& n) const { return line_of(n.offset_debug()); }
  [[noreturn]] void fail_at(const pugi::xml_node& n, const std::string& what) const { fail(file_, line(n), what); }

  long long integer(const pugi::xml_node& n, const char* name, bool required, long long dflt, long long lo,
                    long long hi) const {
    const pugi::xml_attribute a = n.attribute(name);
    if (!a) {
      if (required) fail_at(n, std::string("<") + n.name() + "> lacks attribute '" + name + "'");
      return dflt;
    }
    long long v = 0;
    if (!parse_int(a.value(), v))
      fail_at(n, std::string("<") + n.name() + "> attribute " + name + "=\"" + a.value() + "\" " +
                     (overflowing_int(a.value()) ? "outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]"
                                                 : std::string("is not an integer")));
    if (v < lo || v > hi)
      fail_at(n, std::string("<") + n.name() + "> attribute " + name + "=" + std::to_string(v) + " outside [" +
                     std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v;
  }
  /// Text or CDATA inside an element of the schedule (`<tb>xyz<step .../></tb>`):
  /// MSCCL's format is elements and attributes only, so text is a typo
  /// (a stray character, a value meant as an attribute). Throws ScheduleError.
  void no_text_in(const pugi::xml_node& n) const {
    for (const pugi::xml_node& c : n.children())
      if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) {
        std::string t = c.value();
        const auto b = t.find_first_not_of(" \t\r\n"), e = t.find_last_not_of(" \t\r\n");
        t = b == std::string::npos ? std::string() : t.substr(b, e - b + 1);
        if (t.size() > 20) t = t.substr(0, 20) + "...";
        for (char& ch : t)
          if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
        fail_at(c, std::string(c.type() == pugi::node_cdata ? "CDATA" : "text") + " '" + t + "' inside <" + n.name() +
                       ">: a schedule holds elements and attributes only");
      }
  }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::vector<std::size_t> line_starts_;
};

constexpr long long kMaxChunks = 1ll << 40;
constexpr std::uint64_t kMaxScratchBytes = 1ull << 40;  ///< per rank
constexpr long long kMaxIds = 1 << 20;

}  // namespace

bool parse_step_type(const std::string& n, StepType& t) {
  static const std::map<std::string, StepType> m{{"s", StepType::send},
                                                 {"r", StepType::recv},
                                                 {"rcs", StepType::recv_copy_send},
                                                 {"rrc", StepType::recv_reduce_copy},
                                                 {"rrs", StepType::recv_reduce_send},
                                                 {"rrcs", StepType::recv_reduce_copy_send},
                                                 {"re", StepType::reduce},
                                                 {"cpy", StepType::copy},
                                                 {"nop", StepType::nop}};
  const auto it = m.find(n);
  if (it == m.end()) return false;
  t = it->second;
  return true;
}

std::string to_string(StepType t) {
  switch (t) {
    case StepType::send: return "s";
    case StepType::recv: return "r";
    case StepType::recv_copy_send: return "rcs";
    case StepType::recv_reduce_copy: return "rrc";
    case StepType::recv_reduce_send: return "rrs";
    case StepType::recv_reduce_copy_send: return "rrcs";
    case StepType::reduce: return "re";
    case StepType::copy: return "cpy";
    case StepType::nop: return "nop";
  }
  return "?";
}

std::string to_string(Buf b) { return b == Buf::input ? "i" : b == Buf::output ? "o" : "s"; }

bool receives(StepType t) {
  return t == StepType::recv || t == StepType::recv_copy_send || t == StepType::recv_reduce_copy ||
         t == StepType::recv_reduce_send || t == StepType::recv_reduce_copy_send;
}
bool sends(StepType t) {
  return t == StepType::send || t == StepType::recv_copy_send || t == StepType::recv_reduce_send ||
         t == StepType::recv_reduce_copy_send;
}
bool reads_src(StepType t) {
  return t == StepType::send || t == StepType::recv_reduce_copy || t == StepType::recv_reduce_send ||
         t == StepType::recv_reduce_copy_send || t == StepType::reduce || t == StepType::copy;
}
bool writes_dst(StepType t) {
  return t == StepType::recv || t == StepType::recv_copy_send || t == StepType::recv_reduce_copy ||
         t == StepType::recv_reduce_copy_send || t == StepType::reduce || t == StepType::copy;
}

Schedule parse_msccl_xml(const std::string& text, const std::string& file) {
  XmlReader X(text, file);
  pugi::xml_document doc;
  const pugi::xml_parse_result pr = doc.load_buffer(text.data(), text.size(), pugi::parse_default, pugi::encoding_auto);
  if (!pr) fail(file, X.line_of(pr.offset), std::string("malformed XML: ") + pr.description());
  const pugi::xml_node algo = doc.child("algo");
  if (!algo) {
    const pugi::xml_node first =
        doc.first_child().type() == pugi::node_element ? doc.first_child() : doc.document_element();
    fail(file, first ? X.line(first) : 1, "an MSCCL schedule has one <algo> element at the top");
  }
  // pugixml accepts several top-level elements; a second <algo> (or anything
  // else) would be ignored without a word.
  for (const pugi::xml_node& n : doc.children())
    if (n.type() == pugi::node_element && n != algo)
      X.fail_at(n, std::string("<") + n.name() + "> after the <algo> element (an MSCCL schedule file holds one <algo>)");
  // XML 1.0 §4.1 and §2.2: with no DTD, an entity reference names one of the
  // five predefined entities, and a character reference a legal character
  // (not NUL). pugixml leaves "&foo;" as text and cuts a value at "&#0;", so
  // the references are checked on the undecoded values.
  {
    pugi::xml_document raw;
    // (as a fragment: text outside the elements, "junk<algo ...>" or
    // "</algo>trailing", is kept as such instead of dropped without a word)
    raw.load_buffer(text.data(), text.size(), (pugi::parse_default | pugi::parse_fragment) & ~pugi::parse_escapes,
                    pugi::encoding_auto);
    for (const pugi::xml_node& c : raw.children())
      if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) {
        std::ptrdiff_t at = c.offset_debug();  // the text's first visible character
        while (at >= 0 && static_cast<std::size_t>(at) < text.size() &&
               std::isspace(static_cast<unsigned char>(text[at])))
          ++at;
        fail(file, X.line_of(at), "text outside the <algo> element: a schedule file holds the <algo> element alone");
      }
    auto bad_reference = [](const char* v) -> std::string {
      for (const char* p = std::strchr(v, '&'); p; p = std::strchr(p + 1, '&')) {
        const char* semi = std::strchr(p, ';');
        const std::string ref = semi ? std::string(p, semi + 1) : std::string(p);
        if (ref == "&lt;" || ref == "&gt;" || ref == "&amp;" || ref == "&apos;" || ref == "&quot;") continue;
        if (semi && ref.size() > 3 && ref[1] == '#') {
          const bool hex = ref[2] == 'x';
          const std::string digits = ref.substr(hex ? 3 : 2, ref.size() - (hex ? 4 : 3));
          char* end = nullptr;
          const unsigned long c = digits.empty() ? 0 : std::strtoul(digits.c_str(), &end, hex ? 16 : 10);
          const bool legal = c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) ||
                             (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
          if (!digits.empty() && end && *end == '\0' && legal) continue;
        }
        return ref.size() > 24 ? ref.substr(0, 24) + "..." : ref;
      }
      return {};
    };
    struct References : pugi::xml_tree_walker {
      decltype(bad_reference)* check = nullptr;
      pugi::xml_node node;
      std::string ref;
      bool for_each(pugi::xml_node& n) override {
        if (n.type() == pugi::node_pcdata) ref = (*check)(n.value());
        for (const pugi::xml_attribute& a : n.attributes())
          if (ref.empty()) ref = (*check)(a.value());
        if (ref.empty()) return true;
        node = n;
        return false;
      }
    } refs;
    refs.check = &bad_reference;
    raw.traverse(refs);
    if (refs.node)
      X.fail_at(refs.node, "'" + refs.ref +
                               "' is not a reference XML knows here (&lt; &gt; &amp; &apos; &quot;, or &#N; of a "
                               "legal character): write the character itself");
  }
  // XML 1.0 §3.1 (well-formedness): no attribute name twice in one element.
  // pugixml keeps both and attribute() returns the first, so send="1" send="2"
  // would run as send="1" without a word.
  struct RepeatedAttribute : pugi::xml_tree_walker {
    pugi::xml_node node;
    std::string name;
    bool for_each(pugi::xml_node& n) override {
      std::set<std::string> seen;
      for (const pugi::xml_attribute& a : n.attributes())
        if (!seen.insert(a.name()).second) {
          node = n;
          name = a.name();
          return false;
        }
      return true;
    }
  } repeated;
  doc.traverse(repeated);
  if (repeated.node)
    X.fail_at(repeated.node, std::string("<") + repeated.node.name() + "> gives attribute '" + repeated.name +
                                 "' twice (malformed XML)");
  Schedule S;
  S.file = file;
  S.format = "msccl-xml";
  S.line = X.line(algo);
  S.coll_line = S.ngpus_line = S.line;
  S.name = algo.attribute("name").value();
  S.proto = algo.attribute("proto") ? algo.attribute("proto").value() : "Simple";
  if (S.proto != "Simple" && S.proto != "LL" && S.proto != "LL128")
    X.fail_at(algo, "<algo> proto=\"" + S.proto + "\" is not one of Simple, LL, LL128");
  S.nchannels = static_cast<int>(X.integer(algo, "nchannels", false, 1, 1, kMaxIds));
  S.nchunksperloop = static_cast<std::uint64_t>(X.integer(algo, "nchunksperloop", true, 1, 1, kMaxChunks));
  // Older MSCCL / SCCL files write neither ngpus nor coll: the number of
  // <gpu> elements is the rank count, and the workload names the collective.
  const bool ngpus_given = static_cast<bool>(algo.attribute("ngpus"));
  if (ngpus_given) S.ngpus = static_cast<int>(X.integer(algo, "ngpus", true, 0, 1, kMaxIds));
  S.coll_given = static_cast<bool>(algo.attribute("coll"));
  if (S.coll_given) {
    S.coll = algo.attribute("coll").value();
    if (!parse_coll(S.coll, S.op))
      X.fail_at(algo, "<algo> coll=\"" + S.coll + "\" has no definition to check against (known: " + kColls + ")");
  }
  S.inplace = X.integer(algo, "inplace", false, 0, 0, 1) == 1;
  X.integer(algo, "outofplace", false, 0, 0, 1);
  S.min_bytes =
      static_cast<std::uint64_t>(X.integer(algo, "minBytes", false, 0, 0, std::numeric_limits<long long>::max()));
  S.max_bytes =
      static_cast<std::uint64_t>(X.integer(algo, "maxBytes", false, 0, 0, std::numeric_limits<long long>::max()));
  if (S.max_bytes && S.min_bytes > S.max_bytes)
    X.fail_at(algo, "<algo> minBytes=" + std::to_string(S.min_bytes) + " is above maxBytes=" +
                        std::to_string(S.max_bytes) + ": no size would fit the schedule (maxBytes 0: no upper bound)");
  X.no_text_in(algo);
  for (const pugi::xml_node& g : algo.children()) {
    if (g.type() != pugi::node_element) continue;
    if (std::string(g.name()) != "gpu")
      X.fail_at(g, std::string("unknown element <") + g.name() + "> in <algo> (expected <gpu>)");
    ScheduleGpu G;
    G.id = static_cast<int>(X.integer(g, "id", true, 0, 0, kMaxIds));
    G.i_chunks = static_cast<std::uint64_t>(X.integer(g, "i_chunks", true, 0, 0, kMaxChunks));
    G.o_chunks = static_cast<std::uint64_t>(X.integer(g, "o_chunks", true, 0, 0, kMaxChunks));
    G.s_chunks = static_cast<std::uint64_t>(X.integer(g, "s_chunks", false, 0, 0, kMaxChunks));
    G.line = X.line(g);
    X.no_text_in(g);
    for (const pugi::xml_node& t : g.children()) {
      if (t.type() != pugi::node_element) continue;
      if (std::string(t.name()) != "tb")
        X.fail_at(t, std::string("unknown element <") + t.name() + "> in <gpu> (expected <tb>)");
      ScheduleThreadblock T;
      T.id = static_cast<int>(X.integer(t, "id", true, 0, 0, kMaxIds));
      T.send = static_cast<int>(X.integer(t, "send", true, -1, -1, kMaxIds));
      T.recv = static_cast<int>(X.integer(t, "recv", true, -1, -1, kMaxIds));
      // chan="-1": msccl-tools' mark of a threadblock without peers (local
      // steps only), whose channel means nothing; with a peer it is an error.
      T.chan = static_cast<int>(X.integer(t, "chan", false, 0, -1, kMaxIds));
      if (T.chan < 0 && (T.send >= 0 || T.recv >= 0))
        X.fail_at(t, "<tb> chan=-1 is only for a threadblock without peers (send=-1 recv=-1)");
      if (T.chan < 0) T.chan = 0;
      T.line = X.line(t);
      X.no_text_in(t);
      for (const pugi::xml_node& st : t.children()) {
        if (st.type() != pugi::node_element) continue;
        if (std::string(st.name()) != "step")
          X.fail_at(st, std::string("unknown element <") + st.name() + "> in <tb> (expected <step>)");
        ScheduleStep P;
        P.line = X.line(st);
        X.no_text_in(st);
        P.s = static_cast<int>(X.integer(st, "s", true, 0, 0, kMaxIds));
        if (!st.attribute("type")) X.fail_at(st, "<step> lacks attribute 'type'");
        const std::string ty = st.attribute("type").value();
        if (!parse_step_type(ty, P.type))
          X.fail_at(st, "unknown step type '" + ty + "' (known: s, r, rcs, rrc, rrs, rrcs, re, cpy, nop)");
        // Buffers and offsets are read where the step uses them; elsewhere
        // msccl-tools writes informational values (e.g. -1).
        auto buf = [&](const char* attr, bool used, Buf dflt) {
          const pugi::xml_attribute a = st.attribute(attr);
          Buf b = dflt;
          if (!a) {
            if (used) X.fail_at(st, "<step> of type " + ty + " lacks attribute '" + attr + "'");
            return b;
          }
          if (!parse_buf(a.value(), b)) {
            if (used || std::string(a.value()) != "")
              X.fail_at(st, std::string("unknown buffer ") + attr + "=\"" + a.value() + "\" (known: i, o, s)");
          }
          return b;
        };
        const bool us = reads_src(P.type), ud = writes_dst(P.type);
        P.srcbuf = buf("srcbuf", us, Buf::input);
        P.dstbuf = buf("dstbuf", ud, Buf::output);
        const long long so = X.integer(st, "srcoff", us, -1, -1, kMaxChunks);
        const long long dof = X.integer(st, "dstoff", ud, -1, -1, kMaxChunks);
        if (us && so < 0)
          X.fail_at(st, "<step> srcoff=" + std::to_string(so) + " outside buffer " + to_string(P.srcbuf));
        if (ud && dof < 0)
          X.fail_at(st, "<step> dstoff=" + std::to_string(dof) + " outside buffer " + to_string(P.dstbuf));
        P.srcoff = so < 0 ? 0 : static_cast<std::uint64_t>(so);
        P.dstoff = dof < 0 ? 0 : static_cast<std::uint64_t>(dof);
        const long long cnt = X.integer(st, "cnt", P.type != StepType::nop, 0, 0, kMaxChunks);
        if (P.type != StepType::nop && cnt < 1) X.fail_at(st, "<step> cnt must be >= 1 for a step that moves data");
        P.cnt = static_cast<std::uint64_t>(cnt);
        P.depid = static_cast<int>(X.integer(st, "depid", false, -1, -1, kMaxIds));
        P.deps = static_cast<int>(X.integer(st, "deps", false, -1, -1, kMaxIds));
        P.hasdep = X.integer(st, "hasdep", false, 0, 0, 1) == 1;
        if (st.attribute("hasdep") && !P.hasdep) P.hasdep_zero = true;
        T.steps.push_back(P);
      }
      G.tbs.push_back(std::move(T));
    }
    S.gpus.push_back(std::move(G));
  }
  if (!ngpus_given) {
    if (S.gpus.empty()) X.fail_at(algo, "<algo> lists no <gpu>");
    S.ngpus = static_cast<int>(S.gpus.size());
  }
  // MSCCL's runtimes (msccl-executor-nccl and RCCL's msccl kernels) signal
  // a step's completion to the threadblocks that depend on it only when it
  // says hasdep="1": a dependency on a step that says hasdep="0" would wait
  // forever there. fabricsim orders by depid/deps alone; it warns, once per
  // such step.
  for (const ScheduleGpu& G : S.gpus) {
    std::set<std::pair<int, int>> warned;  // (tb, step) already named
    for (const ScheduleThreadblock& T : G.tbs)
      for (const ScheduleStep& P : T.steps) {
        if (P.depid < 0 || P.deps < 0 || P.depid >= static_cast<int>(G.tbs.size()) ||
            P.deps >= static_cast<int>(G.tbs[P.depid].steps.size()))
          continue;
        const ScheduleStep& D = G.tbs[P.depid].steps[P.deps];
        if (!D.hasdep_zero || !warned.emplace(P.depid, P.deps).second) continue;
        S.warnings.push_back(file + ":" + std::to_string(D.line) + ": gpu " + std::to_string(G.id) + " tb " +
                             std::to_string(P.depid) + " step " + std::to_string(P.deps) +
                             " says hasdep=\"0\" but step " + std::to_string(P.s) + " of tb " + std::to_string(T.id) +
                             " (line " + std::to_string(P.line) +
                             ") depends on it: MSCCL's runtimes would not signal it and that step would wait "
                             "forever; fabricsim runs it as if hasdep=\"1\"");
      }
  }
  return S;
}

void resolve_collective(Schedule& S, Op op) {
  if (S.coll_given) return;
  S.op = op;
  S.coll = to_string(op);
}

// ---- native YAML ----------------------------------------------------------------

namespace {

class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}
  static int line(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }
  [[noreturn]] void fail_at(const YAML::Node& n, const std::string& what) const { fail(file_, line(n), what); }
  void keys(const YAML::Node& m, const std::string& where, const std::set<std::string>& allowed) const {
    if (!m.IsMap()) fail_at(m, where + " must be a map");
    std::set<std::string> seen;
    for (auto it = m.begin(); it != m.end(); ++it) {
      const std::string k = it->first.Scalar();
      // yaml-cpp keeps the first of two equal keys silently; a strict file rejects them.
      if (!seen.insert(k).second) fail_at(it->first, "duplicate key '" + k + "' in " + where);
      if (!allowed.count(k)) {
        std::string known;
        for (const auto& a : allowed) known += (known.empty() ? "" : ", ") + a;
        fail_at(it->first, "unknown key '" + k + "' in " + where + " (known: " + known + ")");
      }
    }
  }
  long long integer(const YAML::Node& m, const std::string& key, bool required, long long dflt, long long lo,
                    long long hi, const std::string& where) const {
    const YAML::Node v = m[key];
    if (!v) {
      if (required) fail_at(m, where + " lacks key '" + key + "'");
      return dflt;
    }
    long long x = 0;
    if (v.IsNull()) fail_at(v, where + "." + key + ": has no value (give an integer)");
    if (!v.IsScalar()) fail_at(v, where + "." + key + ": is a " + (v.IsMap() ? "map" : "list") + ", not an integer");
    if (!parse_int(v.Scalar(), x))
      fail_at(v, where + "." + key + ": '" + v.Scalar() + "' " +
                     (overflowing_int(v.Scalar()) ? "outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]"
                                                  : std::string("is not an integer")));
    if (x < lo || x > hi)
      fail_at(v, where + "." + key + ": " + std::to_string(x) + " outside [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "]");
    return x;
  }
  std::string string(const YAML::Node& m, const std::string& key, bool required, const std::string& dflt,
                     const std::string& where) const {
    const YAML::Node v = m[key];
    if (!v) {
      if (required) fail_at(m, where + " lacks key '" + key + "'");
      return dflt;
    }
    if (!v.IsScalar()) fail_at(v, where + "." + key + " must be a single value");
    return v.Scalar();
  }
  bool boolean(const YAML::Node& m, const std::string& key, bool dflt, const std::string& where) const {
    const YAML::Node v = m[key];
    if (!v) return dflt;
    const std::string s = v.IsScalar() ? v.Scalar() : "";
    if (s == "true") return true;
    if (s == "false") return false;
    fail_at(v, where + "." + key + ": '" + s + "' is not true or false");
  }
  // "o[3]" -> (output, 3)
  void buffer_ref(const YAML::Node& v, const std::string& where, Buf& b, std::uint64_t& off) const {
    const std::string s = v.IsScalar() ? v.Scalar() : "";
    long long k = -1;
    if (s.size() < 4 || s[1] != '[' || s.back() != ']' || !parse_buf(s.substr(0, 1), b) ||
        !parse_int(s.substr(2, s.size() - 3), k) || k < 0)
      fail_at(v, where + ": '" + s + "' is not BUFFER[CHUNK] with BUFFER i, o or s (e.g. o[3])");
    off = static_cast<std::uint64_t>(k);
  }
  const std::string& file() const { return file_; }
  /// One more rank, threadblock or step read at `n`. Written out, each takes
  /// several bytes of text; only aliases (`*name`, which yaml-cpp expands by
  /// reference) can make more of them than the file has bytes, and a few
  /// kilobytes of nested aliases would expand to billions of steps.
  void count(const YAML::Node& n) {
    if (++items_ > budget_)
      fail_at(n, "YAML aliases expand the schedule to more ranks, threadblocks and steps than the file has bytes (" +
                     std::to_string(budget_) + "); write each step out");
  }
  void set_budget(std::uint64_t bytes) { budget_ = bytes; }

 private:
  std::string file_;
  std::uint64_t items_ = 0, budget_ = 0;
};

}  // namespace

Schedule parse_schedule_yaml(const std::string& text, const std::string& file) {
  YamlReader Y(file);
  Y.set_budget(text.size());
  YAML::Node root;
  int second = 0;
  try {
    root = YAML::Load(text);
    second = second_document_line(text);
  } catch (const YAML::DeepRecursion& e) {  // its own text is only "bad file"
    fail(file, e.mark.line >= 0 ? e.mark.line + 1 : 0,
         "lists or maps nested more than " + std::to_string(e.depth()) + " levels deep (yaml-cpp's limit)");
  } catch (const YAML::Exception& e) {
    fail(file, e.mark.line >= 0 ? e.mark.line + 1 : 0, "malformed YAML: " + e.msg);
  }
  if (second > 0) fail(file, second, "a second YAML document begins here: a schedule file is one document");
  if (!root || !root.IsMap() || !root["schedule"])
    fail(file, 1, "a native schedule file has one top-level key 'schedule'");
  Y.keys(root, "the file", {"schedule"});
  const YAML::Node s = root["schedule"];
  Y.keys(s, "schedule",
         {"name", "collective", "ranks", "chunks", "protocol", "channels", "inplace", "buffers", "min_bytes",
          "max_bytes", "gpus"});
  Schedule S;
  S.file = file;
  S.format = "yaml";
  S.line = YamlReader::line(s);
  S.name = Y.string(s, "name", false, "", "schedule");
  S.coll = Y.string(s, "collective", true, "", "schedule");
  S.coll_line = YamlReader::line(s["collective"]);
  if (!parse_coll(S.coll, S.op))
    Y.fail_at(s["collective"],
              "schedule.collective '" + S.coll + "' has no definition to check against (known: " + kColls + ")");
  S.ngpus = static_cast<int>(Y.integer(s, "ranks", true, 0, 1, kMaxIds, "schedule"));
  S.ngpus_line = YamlReader::line(s["ranks"]);
  S.nchunksperloop = static_cast<std::uint64_t>(Y.integer(s, "chunks", true, 1, 1, kMaxChunks, "schedule"));
  S.proto = Y.string(s, "protocol", false, "Simple", "schedule");
  if (S.proto != "Simple" && S.proto != "LL" && S.proto != "LL128")
    Y.fail_at(s["protocol"], "schedule.protocol '" + S.proto + "' is not one of Simple, LL, LL128");
  S.nchannels = static_cast<int>(Y.integer(s, "channels", false, 1, 1, kMaxIds, "schedule"));
  S.inplace = Y.boolean(s, "inplace", false, "schedule");
  S.min_bytes = static_cast<std::uint64_t>(
      Y.integer(s, "min_bytes", false, 0, 0, std::numeric_limits<long long>::max(), "schedule"));
  S.max_bytes = static_cast<std::uint64_t>(
      Y.integer(s, "max_bytes", false, 0, 0, std::numeric_limits<long long>::max(), "schedule"));
  if (S.max_bytes && S.min_bytes > S.max_bytes)
    Y.fail_at(s["min_bytes"], "schedule.min_bytes " + std::to_string(S.min_bytes) + " is above max_bytes " +
                                  std::to_string(S.max_bytes) +
                                  ": no size would fit the schedule (max_bytes 0: no "
                                  "upper bound)");
  std::uint64_t di = S.nchunksperloop, dout = S.nchunksperloop, ds = 0;
  auto read_buffers = [&](const YAML::Node& b, const std::string& where, std::uint64_t& i, std::uint64_t& o,
                          std::uint64_t& sc) {
    if (!b) return;
    Y.keys(b, where, {"input", "output", "scratch"});
    i = static_cast<std::uint64_t>(Y.integer(b, "input", false, static_cast<long long>(i), 0, kMaxChunks, where));
    o = static_cast<std::uint64_t>(Y.integer(b, "output", false, static_cast<long long>(o), 0, kMaxChunks, where));
    sc = static_cast<std::uint64_t>(Y.integer(b, "scratch", false, static_cast<long long>(sc), 0, kMaxChunks, where));
  };
  read_buffers(s["buffers"], "schedule.buffers", di, dout, ds);
  const YAML::Node gpus = s["gpus"];
  if (!gpus || !gpus.IsSequence()) Y.fail_at(gpus ? gpus : s, "schedule.gpus must be a list of ranks");
  for (std::size_t gi = 0; gi < gpus.size(); ++gi) {
    const YAML::Node g = gpus[gi];
    Y.count(g);
    const std::string gw = "schedule.gpus[" + std::to_string(gi) + "]";
    Y.keys(g, gw, {"rank", "buffers", "threadblocks"});
    ScheduleGpu G;
    G.line = YamlReader::line(g);
    G.id = static_cast<int>(Y.integer(g, "rank", true, 0, 0, kMaxIds, gw));
    G.i_chunks = di;
    G.o_chunks = dout;
    G.s_chunks = ds;
    read_buffers(g["buffers"], gw + ".buffers", G.i_chunks, G.o_chunks, G.s_chunks);
    const YAML::Node tbs = g["threadblocks"];
    if (tbs && !tbs.IsSequence()) Y.fail_at(tbs, gw + ".threadblocks must be a list");
    for (std::size_t ti = 0; tbs && ti < tbs.size(); ++ti) {
      const YAML::Node t = tbs[ti];
      Y.count(t);
      const std::string tw = gw + ".threadblocks[" + std::to_string(ti) + "]";
      Y.keys(t, tw, {"id", "send", "recv", "channel", "steps"});
      ScheduleThreadblock T;
      T.line = YamlReader::line(t);
      T.id = static_cast<int>(Y.integer(t, "id", false, static_cast<long long>(ti), 0, kMaxIds, tw));
      T.send = static_cast<int>(Y.integer(t, "send", false, -1, -1, kMaxIds, tw));
      T.recv = static_cast<int>(Y.integer(t, "recv", false, -1, -1, kMaxIds, tw));
      T.chan = static_cast<int>(Y.integer(t, "channel", false, 0, 0, kMaxIds, tw));
      const YAML::Node steps = t["steps"];
      if (steps && !steps.IsSequence()) Y.fail_at(steps, tw + ".steps must be a list");
      for (std::size_t si = 0; steps && si < steps.size(); ++si) {
        const YAML::Node p = steps[si];
        Y.count(p);
        const std::string pw = tw + ".steps[" + std::to_string(si) + "]";
        Y.keys(p, pw, {"type", "src", "dst", "cnt", "after"});
        ScheduleStep P;
        P.line = YamlReader::line(p);
        P.s = static_cast<int>(si);
        const std::string ty = Y.string(p, "type", true, "", pw);
        if (!parse_step_type(ty, P.type))
          Y.fail_at(p["type"],
                    pw + ": unknown step type '" + ty + "' (known: s, r, rcs, rrc, rrs, rrcs, re, cpy, nop)");
        if (reads_src(P.type)) {
          if (!p["src"]) Y.fail_at(p, pw + ": a step of type " + ty + " needs 'src'");
          Y.buffer_ref(p["src"], pw + ".src", P.srcbuf, P.srcoff);
        } else if (p["src"]) {
          Y.fail_at(p["src"], pw + ": a step of type " + ty + " reads no source (drop 'src')");
        }
        if (writes_dst(P.type)) {
          if (!p["dst"]) Y.fail_at(p, pw + ": a step of type " + ty + " needs 'dst'");
          Y.buffer_ref(p["dst"], pw + ".dst", P.dstbuf, P.dstoff);
        } else if (p["dst"]) {
          Y.fail_at(p["dst"], pw + ": a step of type " + ty + " writes no destination (drop 'dst')");
        }
        P.cnt = static_cast<std::uint64_t>(Y.integer(p, "cnt", false, P.type == StepType::nop ? 0 : 1,
                                                     P.type == StepType::nop ? 0 : 1, kMaxChunks, pw));
        if (const YAML::Node a = p["after"]) {
          long long tb = -1, st = -1;
          if (!a.IsSequence() || a.size() != 2 || !a[0].IsScalar() || !a[1].IsScalar() ||
              !parse_int(a[0].Scalar(), tb) || !parse_int(a[1].Scalar(), st) || tb < 0 || st < 0 || tb > kMaxIds ||
              st > kMaxIds)
            Y.fail_at(a, pw + ".after must be [THREADBLOCK, STEP] (both in [0, " + std::to_string(kMaxIds) + "])");
          P.depid = static_cast<int>(tb);
          P.deps = static_cast<int>(st);
        }
        T.steps.push_back(P);
      }
      G.tbs.push_back(std::move(T));
    }
    S.gpus.push_back(std::move(G));
  }
  // hasdep: derived (informational in MSCCL, too).
  for (auto& G : S.gpus)
    for (auto& T : G.tbs)
      for (auto& P : T.steps)
        if (P.depid >= 0 && P.depid < static_cast<int>(G.tbs.size()) && P.deps >= 0 &&
            P.deps < static_cast<int>(G.tbs[P.depid].steps.size()))
          G.tbs[P.depid].steps[P.deps].hasdep = true;
  return S;
}

// ---- validation --------------------------------------------------------------------

namespace {
// The keys' names in messages, as the schedule's own format spells them.
const char* ranks_key(const Schedule& S) { return S.format == "yaml" ? "ranks" : "ngpus"; }
const char* chunks_key(const Schedule& S) { return S.format == "yaml" ? "chunks" : "nchunksperloop"; }
}  // namespace

void validate(const Schedule& S) {
  const std::string& F = S.file;
  if (static_cast<int>(S.gpus.size()) != S.ngpus)
    fail(F, S.ngpus_line,
         std::string(ranks_key(S)) + " is " + std::to_string(S.ngpus) + " but the schedule lists " +
             std::to_string(S.gpus.size()) + (S.format == "yaml" ? " ranks" : " GPUs"));
  for (int g = 0; g < S.ngpus; ++g) {
    const ScheduleGpu& G = S.gpus[g];
    if (G.id != g)
      fail(F, G.line,
           "GPU ids must run 0, 1, ... in order: expected " + std::to_string(g) + ", found " + std::to_string(G.id));
    std::map<std::pair<int, int>, int> send_conn, recv_conn;
    for (std::size_t t = 0; t < G.tbs.size(); ++t) {
      const ScheduleThreadblock& T = G.tbs[t];
      const std::string tn = "rank " + std::to_string(g) + " threadblock " + std::to_string(T.id);
      if (T.id != static_cast<int>(t))
        fail(F, T.line,
             "threadblock ids of rank " + std::to_string(g) + " must run 0, 1, ... in order: expected " +
                 std::to_string(t) + ", found " + std::to_string(T.id));
      for (int peer : {T.send, T.recv}) {
        if (peer >= S.ngpus)
          fail(F, T.line,
               tn + ": peer rank " + std::to_string(peer) + " outside [0, " + std::to_string(S.ngpus - 1) + "]");
        if (peer == g) fail(F, T.line, tn + ": a threadblock cannot send to or receive from its own rank");
      }
      if (T.chan >= S.nchannels)
        fail(F, T.line,
             tn + ": channel " + std::to_string(T.chan) +
                 " outside [0, nchannels - 1 = " + std::to_string(S.nchannels - 1) + "]");
      if (T.send >= 0 && !send_conn.emplace(std::make_pair(T.send, T.chan), T.id).second)
        fail(F, T.line,
             tn + " and threadblock " + std::to_string(send_conn[{T.send, T.chan}]) + " both send to rank " +
                 std::to_string(T.send) + " on channel " + std::to_string(T.chan) +
                 " (one connection per peer and channel)");
      if (T.recv >= 0 && !recv_conn.emplace(std::make_pair(T.recv, T.chan), T.id).second)
        fail(F, T.line,
             tn + " and threadblock " + std::to_string(recv_conn[{T.recv, T.chan}]) + " both receive from rank " +
                 std::to_string(T.recv) + " on channel " + std::to_string(T.chan) +
                 " (one connection per peer and channel)");
      for (std::size_t k = 0; k < T.steps.size(); ++k) {
        const ScheduleStep& P = T.steps[k];
        const std::string sn = tn + " step " + std::to_string(P.s) + " (" + to_string(P.type) + ")";
        if (P.s != static_cast<int>(k))
          fail(F, P.line,
               tn + ": steps must be numbered 0, 1, ... in order: expected " + std::to_string(k) + ", found " +
                   std::to_string(P.s));
        if (sends(P.type) && T.send < 0) fail(F, P.line, sn + " sends, but the threadblock has no send peer (send=-1)");
        if (receives(P.type) && T.recv < 0)
          fail(F, P.line, sn + " receives, but the threadblock has no recv peer (recv=-1)");
        auto chunks = [&](Buf b) { return b == Buf::input ? G.i_chunks : b == Buf::output ? G.o_chunks : G.s_chunks; };
        auto inside = [&](Buf b, std::uint64_t off, const char* what) {
          const std::uint64_t n = chunks(b);
          if (off > n || P.cnt > n - off)
            fail(F, P.line,
                 sn + ": " + what + " chunks [" + std::to_string(off) + ", " + std::to_string(off + P.cnt) +
                     ") lie outside buffer " + to_string(b) + " of " + std::to_string(n) + " chunks");
        };
        if (reads_src(P.type)) inside(P.srcbuf, P.srcoff, "source");
        if (writes_dst(P.type)) inside(P.dstbuf, P.dstoff, "destination");
        if ((P.depid < 0) != (P.deps < 0)) fail(F, P.line, sn + ": depid and deps go together (both -1 or both set)");
        if (P.depid >= 0) {
          if (P.depid >= static_cast<int>(G.tbs.size()))
            fail(F, P.line,
                 sn + ": depid " + std::to_string(P.depid) + " names no threadblock of rank " + std::to_string(g));
          if (P.deps >= static_cast<int>(G.tbs[P.depid].steps.size()))
            fail(F, P.line,
                 sn + ": deps " + std::to_string(P.deps) + " names no step of threadblock " + std::to_string(P.depid) +
                     " (it has " + std::to_string(G.tbs[P.depid].steps.size()) + ")");
        }
      }
    }
    // Dependency cycles on this GPU: nodes (tb, step), edges step order and depid/deps.
    std::vector<std::size_t> base(G.tbs.size() + 1, 0);
    for (std::size_t t = 0; t < G.tbs.size(); ++t) base[t + 1] = base[t] + G.tbs[t].steps.size();
    const std::size_t n = base.back();
    std::vector<std::vector<std::size_t>> pred(n);
    for (std::size_t t = 0; t < G.tbs.size(); ++t)
      for (std::size_t k = 0; k < G.tbs[t].steps.size(); ++k) {
        const ScheduleStep& P = G.tbs[t].steps[k];
        if (k > 0) pred[base[t] + k].push_back(base[t] + k - 1);
        if (P.depid >= 0) pred[base[t] + k].push_back(base[P.depid] + P.deps);
      }
    std::vector<int> color(n, 0);  // 0 new, 1 on stack, 2 done
    std::vector<std::size_t> parent(n, n);
    auto name = [&](std::size_t v) {
      const std::size_t t = static_cast<std::size_t>(std::upper_bound(base.begin(), base.end(), v) - base.begin()) - 1;
      return std::make_pair(t, v - base[t]);
    };
    for (std::size_t root = 0; root < n; ++root) {
      if (color[root]) continue;
      std::vector<std::pair<std::size_t, std::size_t>> stack{{root, 0}};
      color[root] = 1;
      while (!stack.empty()) {
        auto& [v, i] = stack.back();
        if (i < pred[v].size()) {
          const std::size_t w = pred[v][i++];
          if (color[w] == 1) {
            // Cycle: w ... v -> w (v waits for w, which waits ... for v).
            // parent[x] waits for x; v waits for w.
            auto label = [&](std::size_t x) {
              const auto [t, k] = name(x);
              return "threadblock " + std::to_string(t) + " step " + std::to_string(k);
            };
            std::string path;
            for (std::size_t x = v;; x = parent[x]) {
              path = label(x) + (path.empty() ? "" : " -> " + path);
              if (x == w || parent[x] == n) break;
            }
            const auto [t, k] = name(v);
            fail(F, G.tbs[t].steps[k].line,
                 "dependency cycle on rank " + std::to_string(g) + ": " + path + " -> " + label(w) +
                     " (A -> B: A waits for B, through step order or depid/deps)");
          }
          if (color[w] == 0) {
            color[w] = 1;
            parent[w] = v;
            stack.emplace_back(w, 0);
          }
        } else {
          color[v] = 2;
          stack.pop_back();
        }
      }
    }
  }
  // Sends and receives pair up in step order per connection (sender, receiver, channel).
  for (int g = 0; g < S.ngpus; ++g)
    for (const ScheduleThreadblock& T : S.gpus[g].tbs) {
      if (T.send < 0) continue;
      const ScheduleThreadblock* R = nullptr;
      for (const ScheduleThreadblock& U : S.gpus[T.send].tbs)
        if (U.recv == g && U.chan == T.chan) R = &U;
      std::vector<const ScheduleStep*> tx, rx;
      for (const auto& P : T.steps)
        if (sends(P.type)) tx.push_back(&P);
      if (R)
        for (const auto& P : R->steps)
          if (receives(P.type)) rx.push_back(&P);
      const std::string conn = " from rank " + std::to_string(g) + " to rank " + std::to_string(T.send) +
                               " on channel " + std::to_string(T.chan);
      for (std::size_t m = 0; m < std::max(tx.size(), rx.size()); ++m) {
        if (m >= rx.size())
          fail(
              F, tx[m]->line,
              "rank " + std::to_string(g) + " threadblock " + std::to_string(T.id) + " step " +
                  std::to_string(tx[m]->s) + " sends message " + std::to_string(m) + conn +
                  ", but no receive matches it (rank " + std::to_string(T.send) +
                  (R ? " threadblock " + std::to_string(R->id) + " receives " + std::to_string(rx.size()) + " messages)"
                     : " has no threadblock with recv=" + std::to_string(g) + " on that channel)"));
        if (m >= tx.size())
          fail(F, rx[m]->line,
               "rank " + std::to_string(T.send) + " threadblock " + std::to_string(R->id) + " step " +
                   std::to_string(rx[m]->s) + " receives message " + std::to_string(m) + conn +
                   ", but no send matches it (rank " + std::to_string(g) + " threadblock " + std::to_string(T.id) +
                   " sends " + std::to_string(tx.size()) + " messages)");
        if (tx[m]->cnt != rx[m]->cnt)
          fail(F, rx[m]->line,
               "message " + std::to_string(m) + conn + ": the send (line " + std::to_string(tx[m]->line) + ") moves " +
                   std::to_string(tx[m]->cnt) + " chunks, the receive " + std::to_string(rx[m]->cnt));
      }
    }
  // A receiving threadblock whose sender has no threadblock towards it.
  for (int g = 0; g < S.ngpus; ++g)
    for (const ScheduleThreadblock& R : S.gpus[g].tbs) {
      if (R.recv < 0) continue;
      bool any_rx = false;
      for (const auto& P : R.steps) any_rx = any_rx || receives(P.type);
      if (!any_rx) continue;
      bool found = false;
      for (const ScheduleThreadblock& T : S.gpus[R.recv].tbs) found = found || (T.send == g && T.chan == R.chan);
      if (!found) {
        for (const auto& P : R.steps)
          if (receives(P.type))
            fail(F, P.line,
                 "rank " + std::to_string(g) + " threadblock " + std::to_string(R.id) + " step " + std::to_string(P.s) +
                     " receives from rank " + std::to_string(R.recv) + " on channel " + std::to_string(R.chan) +
                     ", but no send matches it (rank " + std::to_string(R.recv) +
                     " has no threadblock with send=" + std::to_string(g) + " on that channel)");
      }
    }
}

std::uint64_t op_in_bytes(Op op, std::uint64_t T, int N) { return op == Op::allgather ? T / N : T; }
std::uint64_t op_out_bytes(Op op, std::uint64_t T, int N) { return op == Op::reduce_scatter ? T / N : T; }

std::uint64_t chunk_bytes(const Schedule& s, std::uint64_t bytes) { return bytes / s.nchunksperloop; }

void check_run(const Schedule& S, int ranks, const Op* explicit_op, std::uint64_t T) {
  const std::string& F = S.file;
  if (S.ngpus != ranks)
    fail(F, S.ngpus_line,
         "the schedule is for " + std::string(ranks_key(S)) + "=" + std::to_string(S.ngpus) + " ranks, the fabric has " +
             std::to_string(ranks) +
             " accelerators");
  if (explicit_op && *explicit_op != S.op)
    fail(F, S.coll_line,
         "coll '" + S.coll + "' disagrees with workload.collective '" + to_string(*explicit_op) + "' (set it to '" +
             to_string(S.op) + "', e.g. --set workload.collective=" + to_string(S.op) +
             ", or leave it out of the fabric file)");
  // Every size must be a multiple of 4 B x nchunksperloop, and of 4 B x ranks
  // for a standard collective: the message names the sizes around T that are.
  const std::uint64_t unit =
      S.op == Op::custom ? 4 * S.nchunksperloop : std::lcm<std::uint64_t>(4 * S.nchunksperloop, 4ull * ranks);
  // Only sizes under 4 GiB are suggested (workload.size's limit: one DMA
  // operation's 32-bit length).
  const auto nearest = [&] {
    constexpr std::uint64_t kSizeLimit = 1ull << 32;
    if (unit >= kSizeLimit)
      return " (no size under 4 GiB fits: sizes must be multiples of " + std::to_string(unit) + " B; lower " +
             chunks_key(S) + ")";
    const std::uint64_t below = std::min(T, kSizeLimit - 1) / unit * unit, above = below + unit;
    std::string e = below > 0 ? std::to_string(below) + " B" : std::string();
    if (above < kSizeLimit && above > T) e += (e.empty() ? "" : " or ") + std::to_string(above) + " B";
    return " (sizes that fit: multiples of " + std::to_string(unit) + " B, e.g. " + e + ")";
  };
  if (T == 0 || T % (4 * S.nchunksperloop) != 0)
    fail(F, S.line,
         "size " + std::to_string(T) + " B is not a positive multiple of 4 B x " + chunks_key(S) + " (" +
             std::to_string(4 * S.nchunksperloop) + " B): chunks hold whole float32 values" + nearest());
  if (S.op != Op::custom && T % (4ull * ranks) != 0)
    fail(F, S.line,
         "size " + std::to_string(T) + " B is not a multiple of 4 B x ranks (" + std::to_string(4 * ranks) + " B)" +
             nearest());
  const std::uint64_t C = chunk_bytes(S, T);
  if (S.op == Op::custom) {  // no standard buffers: each rank's are its chunk counts
    for (const ScheduleGpu& G : S.gpus)
      for (const auto& [what, n] : {std::pair{"i", G.i_chunks}, {"o", G.o_chunks}, {"s", G.s_chunks}})
        if (n > kMaxScratchBytes / C)
          fail(F, G.line,
               "rank " + std::to_string(G.id) + ": " + what + "_chunks=" + std::to_string(n) + " of " +
                   std::to_string(C) + " B each (size " + std::to_string(T) + " B) is more than 1 TiB");
    return;
  }
  const std::uint64_t in = op_in_bytes(S.op, T, ranks), out = op_out_bytes(S.op, T, ranks);
  for (const ScheduleGpu& G : S.gpus) {
    // Chunk counts are compared, not multiplied by the chunk size: counts up
    // to 2^40 times chunks of up to 4 GiB would overflow 64 bits.
    auto buffer = [&](const char* what, std::uint64_t chunks, std::uint64_t need) {
      if (chunks == need / C && need % C == 0) return;
      fail(F, G.line,
           "rank " + std::to_string(G.id) + ": " + what + "_chunks=" + std::to_string(chunks) + " chunks of " +
               std::to_string(C) + " B, but " + S.coll + " of " + std::to_string(T) + " B needs " +
               std::to_string(need) + " B of " + (what[0] == 'o' ? "output" : "input") + " (" +
               std::to_string(need / C) + " chunks)");
    };
    // In place, the buffer that is a view of the other may be given as 0
    // chunks: msccl-tools writes o_chunks=0 for an in-place AllReduce (the
    // output is the input) and i_chunks=0 for an in-place AllGather (the input
    // is block r of the output).
    const bool o_aliased = S.inplace && G.o_chunks == 0 && G.i_chunks != 0;
    const bool i_aliased = S.inplace && G.i_chunks == 0;
    if (!o_aliased) buffer("o", G.o_chunks, out);
    if (!i_aliased) buffer("i", G.i_chunks, in);
    if (G.s_chunks > kMaxScratchBytes / C)
      fail(F, G.line,
           "rank " + std::to_string(G.id) + ": s_chunks=" + std::to_string(G.s_chunks) + " of " + std::to_string(C) +
               " B each (size " + std::to_string(T) + " B) is more than 1 TiB of scratch");
  }
}

Schedule load_schedule(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw ScheduleError(path + ": cannot read the schedule file");
  std::ostringstream ss;
  ss << f.rdbuf();
  return parse_schedule(ss.str(), path);
}

Schedule parse_schedule(const std::string& text, const std::string& path) {
  // Both formats are read as UTF-8, and the schedule's names reach result.json.
  // file:line:column of byte `at`, as for configuration files (yaml_config.cpp).
  const auto where = [&](std::size_t at) {
    const auto [line, col] = line_col(text, at);
    return path + ":" + std::to_string(line) + ":" + std::to_string(col) + ": ";
  };
  if (const std::size_t bad = first_invalid_utf8(text); bad != std::string::npos)
    throw ScheduleError(where(bad) + "byte 0x" + hex_byte(static_cast<unsigned char>(text[bad])) +
                        " is not UTF-8 text (save the file as UTF-8)");
  // A carriage return without a line feed (CR-only line endings): no line
  // break to either parser (as for configuration files, yaml_config.cpp).
  for (std::size_t i = text.find('\r'); i != std::string::npos; i = text.find('\r', i + 1))
    if (i + 1 == text.size() || text[i + 1] != '\n')
      throw ScheduleError(where(i) +
                          "a carriage return (CR) without a line feed: save the file with LF (or CRLF) line endings");
  const auto dot = path.rfind('.');
  const std::string ext = dot == std::string::npos ? "" : lower(path.substr(dot));
  Schedule s;
  if (ext == ".xml")
    s = parse_msccl_xml(text, path);
  else if (ext == ".yaml" || ext == ".yml")
    s = parse_schedule_yaml(text, path);
  else
    throw ScheduleError(path + ": unknown schedule format (expected .xml for MSCCL XML or .yaml / .yml)");
  validate(s);
  return s;
}

}  // namespace fabricsim::sw
