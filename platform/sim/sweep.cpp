#include "platform/sim/sweep.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <sstream>

#include "models/link/core/policy.h"
#include "platform/config/link_config.h"
#include "platform/config/rifl_config.h"
#include "platform/config/units.h"
#include "platform/config/yaml_config.h"
#include "platform/fabric/fabric_config.h"
#include "platform/fabric/host_config.h"
#include "platform/report/files.h"
#include "platform/report/identity.h"
#include "platform/report/json_text.h"
#include "platform/sim/run_kind.h"
#include "platform/stats/summary.h"

#ifdef FABRICSIM_MPI
#include <mpi.h>
#endif

extern char** environ;

namespace fabricsim::sim {

namespace fs = std::filesystem;
using report::read_file;
using report::write_atomic;

namespace {
std::vector<std::uint64_t> read_seeds(config::Section& s, const std::string& key, bool required) {
  std::vector<std::uint64_t> out;
  if (!s.has(key)) {
    if (required) s.fail(key, "required section is missing");
    s.child_or_empty(key).finish();
    return out;
  }
  config::Section seeds = s.child(key);
  const std::uint64_t first = seeds.integer("first", 1, 0, ~0ULL >> 1);
  const std::uint64_t count = seeds.integer("count", 1, 1, 100000);
  seeds.finish();
  for (std::uint64_t i = 0; i < count; ++i) out.push_back(first + i);
  return out;
}
}  // namespace

const std::vector<std::string>& variant_metrics(const Study& st, const StudyVariant& v) {
  return v.metrics.empty() ? st.metrics : v.metrics;
}

std::vector<std::string> all_metrics(const Study& st) {
  std::vector<std::string> out = st.metrics;
  for (const auto& v : st.variants)
    for (const auto& m : v.metrics)
      if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  return out;
}

namespace {

// A variant's fabric file, run kind and policies (its own or the study's).
const std::string& variant_fabric(const Study& st, const StudyVariant& v) {
  return v.fabric.empty() ? st.fabric : v.fabric;
}
const RunKind& variant_kind(const Study& st, const StudyVariant& v) {
  return run_kind(v.fabric_kind.empty() ? st.fabric_kind : v.fabric_kind);
}
const std::vector<std::string>& variant_policies(const Study& st, const StudyVariant& v) {
  return v.policies.empty() ? st.policies : v.policies;
}

// A name that is used as one folder name: 1 to 100 bytes, not blank, no
// separator or control character, not starting with '.' or a space, not
// ending in a space.
bool plain_folder_name(const std::string& n) {
  if (n.size() > 100) return false;  // with the cNNN- prefix, well inside NAME_MAX (255)
  if (n.find_first_not_of(' ') == std::string::npos || n.front() == ' ' || n.back() == ' ' || n[0] == '.') return false;
  return std::none_of(n.begin(), n.end(), [](char c) {
    return c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
}

// study.name (a plain folder name: the default output folder out/<name>),
// study.fabric (relative to the study file) and the fabric's kind.
void study_name_and_fabric(config::Section& s, const std::string& path, Study& st) {
  st.name = s.required_string("name");
  // The name is the default output folder out/<name>: one plain folder name.
  if (!plain_folder_name(st.name))
    s.fail("name", fmt::format("'{}' must be a plain folder name (1 to 100 bytes, no '/', '\\' or control character, "
                               "not starting with '.' or ending in a space): "
                               "the sweep writes out/<name>",
                               st.name));
  const std::string fabric = s.required_string("fabric");
  st.fabric = (fs::path(path).parent_path() / fabric).lexically_normal().string();
  if (!config::is_file(st.fabric))
    s.fail("fabric", fmt::format("fabric file '{}' not found or not a regular file", st.fabric));
  // A file that is no fabric (a study, a schedule, an XML file): its own
  // message, under the study's line of the key that names it.
  try {
    const auto fdoc = config::load_document(st.fabric);
    st.fabric_kind = fabric::fabric_kind(fdoc);
  } catch (const config::ConfigError& e) {
    s.fail("fabric", fmt::format("in the file it names: {}", e.what()));
  }
}

// study.policies (known link policies, each once; "none" for kinds without a policy) and seeds.
void study_policies_and_seeds(config::Section& s, const RunKind& kind, Study& st) {
  const bool no_policy = !kind.has_policy();  // no link policy to pass as --policy
  if (no_policy && s.has("policies"))
    s.fail("policies", fmt::format("a {} fabric has no link policy; drop 'policies'", st.fabric_kind));
  st.policies = no_policy ? std::vector<std::string>{"none"} : s.strings("policies", {"preface"});
  if (st.policies.empty()) s.fail("policies", "at least one policy is required");
  for (const auto& p : st.policies) {
    if (no_policy) break;
    const auto& names = link::policy_names();
    if (std::find(names.begin(), names.end(), p) == names.end())
      s.fail("policies", fmt::format("unknown policy '{}'", p));
  }
  std::set<std::string> uniq(st.policies.begin(), st.policies.end());
  if (uniq.size() != st.policies.size()) s.fail("policies", "a policy is listed twice");
  st.seeds = read_seeds(s, "seeds", kind.seeds_required);
  if (st.seeds.empty()) st.seeds = {1};
}

// Why column `c` is not a key of a `kind_name` run's result row ("" if it
// is one, or "variant").
std::string not_a_row_key(const std::string& c, const RunKind& k, const std::string& kind_name) {
  const std::vector<std::string>& row_keys = k.row_keys;
  if (c == "variant" || std::find(row_keys.begin(), row_keys.end(), c) != row_keys.end()) return "";
  std::string known;
  for (const auto& rk : row_keys) known += (known.empty() ? "" : ", ") + rk;
  known += ", variant";
  return fmt::format("'{}' is not a result column of a {} run (known: {})", c, kind_name, known);
}

// `metrics:` of section `s`: each one of the study's columns, each once
// (`dflt` if absent; `row_keys`: the keys of the run kind's rows, to tell a
// misspelt default metric among the columns).
std::vector<std::string> read_metrics(config::Section& s, const Study& st, const std::vector<std::string>& dflt,
                                      const std::vector<std::string>& row_keys = {}) {
  std::vector<std::string> metrics = s.strings("metrics", dflt);
  const bool given = s.has("metrics");
  if (given && metrics.empty())
    s.fail("metrics", "the list is empty: give at least one metric, or leave `metrics` out for the defaults");
  for (const auto& m : metrics) {
    if (text_row_key(m))
      s.fail("metrics", fmt::format("'{}' is text, not a number: list it in `columns:` as an axis, not in `metrics:`", m));
    if (std::find(st.columns.begin(), st.columns.end(), m) == st.columns.end()) {
      // A column misspelling the default metric (`tme_us`): name that column, not the default.
      for (const auto& c : st.columns)
        if (!given && std::find(row_keys.begin(), row_keys.end(), c) == row_keys.end() &&
            config::closest_name(c, {m}) == m)
          s.fail("columns", fmt::format("'{}' is not a result column (did you mean '{}'?)", c, m));
      // Else a column that is no result key at all (a typo of another
      // column) comes first: it is the likelier mistake.
      if (!given && !row_keys.empty())
        for (const auto& c : st.columns)
          if (c != "variant" && std::find(row_keys.begin(), row_keys.end(), c) == row_keys.end()) {
            const std::string guess = config::closest_name(c, row_keys);
            std::string known;
            for (const auto& rk : row_keys) known += (known.empty() ? "" : ", ") + rk;
            s.fail("columns", guess.empty()
                                  ? fmt::format("'{}' is not a result column (known: {})", c, known)
                                  : fmt::format("'{}' is not a result column (did you mean '{}'?)", c, guess));
          }
      s.fail(given ? "metrics" : "columns",
             given ? fmt::format("metric '{}' is not one of the columns", m)
                   : fmt::format("the default metrics of this fabric kind include '{}', which is not one of the "
                                 "columns: add it, or list the study's `metrics:`",
                                 m));
    }
  }
  if (std::set<std::string>(metrics.begin(), metrics.end()).size() != metrics.size())
    s.fail("metrics", "a metric is listed twice");
  return metrics;
}

// study.columns (keys of the kind's result row, or "variant": checked per
// variant once every variant's metrics are known) and metrics (among the columns).
void study_columns(config::Section& s, const RunKind& kind, Study& st) {
  const bool no_policy = !kind.has_policy();
  st.explicit_columns = s.has("columns");
  st.columns = s.strings("columns", kind.default_columns);
  if (st.explicit_columns && st.columns.empty())
    s.fail("columns", "the list is empty: give the columns of results.csv, or leave `columns` out for the defaults");
  for (std::size_t i = 0; i < st.columns.size(); ++i)
    if (std::find(st.columns.begin(), st.columns.begin() + i, st.columns[i]) != st.columns.begin() + i)
      s.fail("columns", fmt::format("'{}' is listed twice: results.csv would have two columns of that name",
                                    st.columns[i]));
  st.metrics = read_metrics(s, st, kind.default_metrics, kind.row_keys);
  const bool has_protocol = std::find(st.columns.begin(), st.columns.end(), "protocol") != st.columns.end();
  for (const auto& need : {"policy", "seed"})
    if (!no_policy && std::find(st.columns.begin(), st.columns.end(), need) == st.columns.end() &&
        !(has_protocol && std::string(need) == "policy"))  // a protocol column names the policy too
      s.fail("columns", fmt::format("columns must include '{}'", need));
}

// run.seed and the link policy are the study's axes (seeds:, policies:): a
// `set` of them would be overridden by every point's --seed / --policy.
void reject_axis_keys(config::Section& sec, const std::string& key, const std::vector<std::string>& assigns,
                      const std::string& policy_key) {
  for (const auto& a : assigns) {
    const std::string k = a.substr(0, a.find('='));
    auto covers = [&](const std::string& target) { return !target.empty() && config::assignment_sets(a, target); };
    if (covers("run.seed"))
      sec.fail(key, fmt::format("'{}' would set run.seed, which the study's seeds decide for every point; "
                                "use seeds: {{first: N, count: 1}}",
                                k));
    if (covers(policy_key))
      sec.fail(key, fmt::format("'{}' would set {}, which the study's policies decide for every point; "
                                "use policies: [...]",
                                k, policy_key));
    // A scalar on a map that holds the policy key (defaults.link.policy:
    // preface) would leave the policy's own key nowhere to go.
    if (!policy_key.empty() && policy_key.compare(0, k.size() + 1, k + ".") == 0) {
      bool map_value = false;
      try {
        map_value = YAML::Load(a.substr(a.find('=') + 1)).IsMap();
      } catch (const YAML::Exception&) {
      }
      if (!map_value)
        sec.fail(key, fmt::format("'{}' would replace the map that holds {}, which the study's policies decide for "
                                  "every point; use policies: [...] (and set the map's other keys one by one, "
                                  "e.g. {}.KEY)",
                                  k, policy_key, k));
    }
  }
}

// A variant's own `fabric:` (another run kind beside the study's needs the
// study's explicit columns, and they must fit its rows) and `policies:`.
// Returns the variant's run kind.
const RunKind& variant_fabric_and_policies(config::Section& v, const std::string& path, const RunKind& kind,
                                           const Study& st, StudyVariant& sv) {
  const RunKind* vkind = &kind;
  if (v.has("fabric")) {
    sv.fabric = (fs::path(path).parent_path() / v.required_string("fabric")).lexically_normal().string();
    if (!config::is_file(sv.fabric))
      v.fail("fabric", fmt::format("fabric file '{}' not found or not a regular file", sv.fabric));
    try {
      sv.fabric_kind = fabric::fabric_kind(config::load_document(sv.fabric));
    } catch (const config::ConfigError& e) {
      v.fail("fabric", fmt::format("in the file it names: {}", e.what()));
    }
    vkind = &run_kind(sv.fabric_kind);
    if (!st.explicit_columns && vkind != &kind) {
      v.fail("fabric", fmt::format("a {} fabric beside the study's {} one needs the study to list its `columns:` "
                                   "(keys both kinds' rows have, e.g. protocol, goodput_gbps)",
                                   sv.fabric_kind, st.fabric_kind));
    }
  }
  if (v.has("policies")) {
    if (!vkind->has_policy())
      v.fail("policies", fmt::format("a {} fabric has no link policy; drop 'policies'",
                                     sv.fabric_kind.empty() ? st.fabric_kind : sv.fabric_kind));
    sv.policies = v.strings("policies", {});
    if (sv.policies.empty()) v.fail("policies", "at least one policy is required");
    const auto& names = link::policy_names();
    for (const auto& p : sv.policies)
      if (std::find(names.begin(), names.end(), p) == names.end())
        v.fail("policies", fmt::format("unknown policy '{}'", p));
    if (std::set<std::string>(sv.policies.begin(), sv.policies.end()).size() != sv.policies.size())
      v.fail("policies", "a policy is listed twice");
  } else if (vkind != &kind) {
    sv.policies = vkind->has_policy() ? st.policies : std::vector<std::string>{"none"};
    if (vkind->has_policy() && !kind.has_policy()) sv.policies = {"preface"};
  }
  return *vkind;
}

// study.variants: named sets of assignments (and seeds, a fabric, policies,
// metrics), each name once; `sections` receives each variant's section.
std::vector<StudyVariant> declared_variants(config::Section& s, const std::string& path, const RunKind& kind,
                                            const Study& st, std::vector<config::Section>& sections) {
  std::set<std::string> names;
  std::vector<StudyVariant> declared;
  for (auto& v : s.list("variants")) {
    StudyVariant sv;
    sv.name = v.required_string("name");
    if (!plain_folder_name(sv.name))
      v.fail("name", fmt::format("'{}' must be a plain folder name (1 to 100 bytes, no '/', '\\' or control "
                                 "character, not starting with '.' or ending in a space): its points are written under "
                                 "points/<name>",
                                 sv.name));
    if (!names.insert(sv.name).second) v.fail("name", fmt::format("variant '{}' is listed twice", sv.name));
    v.string("description", "");
    const RunKind& vkind = variant_fabric_and_policies(v, path, kind, st, sv);
    sv.assignments = v.assignments("set", &sv.assignment_lines, &sv.assignment_columns);
    reject_axis_keys(v, "set", sv.assignments, vkind.policy_key);
    sv.seeds = read_seeds(v, "seeds", false);
    if (v.has("metrics")) {
      sv.metrics = read_metrics(v, st, {});
      if (sv.metrics.empty()) v.fail("metrics", "at least one metric is required (or leave `metrics` out)");
    }
    v.finish();
    declared.push_back(sv);
    sections.push_back(v);
  }
  if (declared.empty() && s.has("variants"))
    s.fail("variants", "the list is empty: give at least one variant, or leave `variants` out");
  return declared;
}

// Every column fits every variant's rows: a key of its run kind's row, or
// "variant", or another variant's metric (then empty in its rows). Errors at
// the study's `columns` for its own fabric, at a variant's `fabric` for another.
void check_variant_columns(config::Section& s, std::vector<config::Section>& sections, const Study& st) {
  const std::vector<std::string> every = all_metrics(st);
  for (std::size_t i = 0; i < st.variants.size(); ++i) {
    const StudyVariant& v = st.variants[i];
    const RunKind& k = variant_kind(st, v);
    const std::string& kind_name = v.fabric.empty() ? st.fabric_kind : v.fabric_kind;
    for (const auto& m : v.metrics)  // the variant's own metrics: keys of its rows
      if (const std::string why = not_a_row_key(m, k, kind_name); !why.empty()) sections[i].fail("metrics", why);
    const auto& own = variant_metrics(st, v);
    for (const auto& c : st.columns) {
      const bool foreign = std::find(every.begin(), every.end(), c) != every.end() &&
                           std::find(own.begin(), own.end(), c) == own.end();
      if (foreign) continue;  // another variant's metric: empty in this variant's rows
      const std::string why = not_a_row_key(c, k, kind_name);
      if (why.empty()) continue;
      if (v.fabric.empty()) s.fail("columns", why);
      sections[i].fail("fabric", "the study's columns do not fit this fabric: " + why);
    }
  }
}

using Grid = std::vector<std::pair<std::string, std::vector<std::string>>>;

/// Most points a study may have (its plan is made whole before any point runs).
constexpr std::uint64_t kMaxPoints = 1000000;

// What a grid value means, so that the same quantity written two ways
// ("1MiB" / "1048576B", "1e-5" / "0.00001", "1000ns" / "1us") is one value:
// a plain number, a time, a size, a rate or a percentage, canonical; a
// boolean as Section::boolean reads it (true / yes / on); a file path
// ("./x.xml", "a/../a/x.xml", "/abs/x.xml") the file it names: looked up as
// a fabric's setting is (beside the fabric file `fabric_dir`, else in the
// current folder), symbolic links resolved; a path naming no file lexically
// normalised. Any other text stands for itself.
std::string grid_value_identity(const std::string& text, const fs::path& fabric_dir) {
  const auto attempt = [&](auto parse, const char* kind) -> std::string {
    try {
      return fmt::format("{}:{}", kind, parse(text));
    } catch (const std::exception&) {
      return std::string();
    }
  };
  for (auto id : {attempt(config::parse_number, "number"), attempt(config::parse_time_ps, "time"),
                  attempt(config::parse_bytes, "size"), attempt(config::parse_rate_bps, "rate")})
    if (!id.empty()) return id;
  if (text.find('%') != std::string::npos)
    if (auto id = attempt(config::parse_fraction, "number"); !id.empty()) return id;
  if (text == "true" || text == "yes" || text == "on") return "bool:true";
  if (text == "false" || text == "no" || text == "off") return "bool:false";
  const fs::path p(text);
  if (text.find('/') != std::string::npos || p.extension() == ".xml" || p.extension() == ".yaml" ||
      p.extension() == ".yml") {
    std::error_code ec;
    if (const std::string f = config::locate_beside(fabric_dir, text).path; !f.empty())
      if (const fs::path c = fs::canonical(f, ec); !ec) return "path:" + c.string();
    return "path:" + p.lexically_normal().string();
  }
  return "text:" + text;
}

// study.grid: key.path: [v1, v2, ...], in file order. `lines`: the study
// file's line of each "key.path=value" (for errors found at validation).
Grid study_grid(const config::Document& doc, config::Section& s, const std::string& policy_key,
                const fs::path& fabric_dir, std::map<std::string, std::pair<int, int>>& lines) {
  Grid grid;
  const YAML::Node g = doc.root["study"]["grid"];
  if (g && g.IsNull())
    s.fail("grid",
           "has no value (a key written with nothing after it, '~' or 'null'): give key.path: [values], or "
           "leave `grid` out");
  if (g) {
    if (!g.IsMap()) s.fail("grid", "expected a map of key.path: [values]");
    if (g.size() == 0) s.fail("grid", "the map is empty: give at least one key.path: [values], or leave `grid` out");
    for (auto it = g.begin(); it != g.end(); ++it) {
      if (const std::string why = config::not_a_key_path(it->first); !why.empty())
        throw config::ConfigError(
            fmt::format("{}:{}:{}: key 'study.grid': {} is not a key path (give key.path: "
                        "[values])",
                        doc.file, it->first.Mark().line + 1, it->first.Mark().column + 1, why));
      std::vector<std::string> vals;
      std::map<std::string, std::size_t> seen;  // value's identity -> item (a long list stays O(n log n))
      if (!it->second.IsSequence() || it->second.size() == 0)
        s.fail("grid", fmt::format("'{}' must be a non-empty list", it->first.Scalar()));
      for (std::size_t i = 0; i < it->second.size(); ++i) {
        if (it->second[i].IsNull())
          s.fail("grid", fmt::format("'{}': item {} (line {}) has no value ('~', 'null' or nothing)",
                                     it->first.Scalar(), i, it->second[i].Mark().line + 1));
        if (!it->second[i].IsScalar())
          s.fail("grid", fmt::format("'{}': item {} (line {}) is a {}, not a single value: a grid takes single "
                                     "values; give list- or map-valued settings as variants (study.variants[].set)",
                                     it->first.Scalar(), i, it->second[i].Mark().line + 1,
                                     it->second[i].IsSequence() ? "list" : "map"));
        if (const auto [at, fresh] = seen.emplace(grid_value_identity(it->second[i].Scalar(), fabric_dir), i); !fresh) {
          const YAML::Node first = it->second[at->second];
          if (first.Scalar() == it->second[i].Scalar())
            s.fail("grid", fmt::format("'{}' lists the value '{}' twice (line {}): two points would have the same "
                                       "label and the same rows",
                                       it->first.Scalar(), it->second[i].Scalar(), it->second[i].Mark().line + 1));
          s.fail("grid", fmt::format("'{}' lists '{}' (line {}) and '{}' (line {}), the same value written two "
                                     "ways: two points would have the same rows",
                                     it->first.Scalar(), first.Scalar(), first.Mark().line + 1, it->second[i].Scalar(),
                                     it->second[i].Mark().line + 1));
        }
        vals.push_back(it->second[i].Scalar());
        lines.emplace(it->first.Scalar() + "=" + vals.back(),
                      std::make_pair(it->second[i].Mark().line + 1, it->second[i].Mark().column + 1));
      }
      grid.emplace_back(it->first.Scalar(), vals);
      for (const auto& x : vals) reject_axis_keys(s, "grid", {it->first.Scalar() + "=" + x}, policy_key);
    }
  }
  s.mark_used("grid");
  return grid;
}

// The cartesian product of the variants with the grid's values.
std::vector<StudyVariant> expand_grid(std::vector<StudyVariant> expanded, const Grid& grid) {
  for (const auto& [key, vals] : grid) {
    std::vector<StudyVariant> next;
    for (const auto& v : expanded)
      for (const auto& x : vals) {
        StudyVariant nv = v;
        nv.assignments.push_back(key + "=" + x);
        nv.name += (nv.name.empty() ? "" : ";") + key + "=" + x;  // e.g. "8MiB;fabric.accelerators=16" (CSV-safe)
        next.push_back(nv);
      }
    expanded.swap(next);
  }
  return expanded;
}

// Validate the fabric under every variant and policy before anything runs.
// A grid value is applied under the study file's line of that value
// (`grid_lines`), so that an error in it names "STUDY:LINE:COLUMN: study.grid";
// study.set and a variant's set entries likewise under their lines.
void validate_points(const Study& st, const std::string& path,
                     const std::map<std::string, std::pair<int, int>>& grid_lines) {
  for (const auto& v : st.variants) {
    const RunKind& vk = variant_kind(st, v);
    for (const auto& p : variant_policies(st, v)) {
      try {
        const auto fdoc = std::make_shared<config::Document>(config::load_document(variant_fabric(st, v)));
        for (std::size_t i = 0; i < st.common.size(); ++i)
          config::apply_overrides(
              *fdoc, {st.common[i]},
              i < st.common_lines.size() && i < st.common_columns.size()
                  ? fmt::format("{}:{}:{}: study.set", path, st.common_lines[i], st.common_columns[i])
                  : std::string());
        for (std::size_t i = 0; i < v.assignments.size(); ++i) {
          const std::string& asg = v.assignments[i];
          std::string who;
          if (i < v.assignment_lines.size() && i < v.assignment_columns.size()) {
            who = fmt::format("{}:{}:{}: study.variants[{}].set", path, v.assignment_lines[i], v.assignment_columns[i],
                              v.name);
          } else if (const auto line = grid_lines.find(asg); line != grid_lines.end()) {
            who = fmt::format("{}:{}:{}: study.grid", path, line->second.first, line->second.second);
          }
          config::apply_overrides(*fdoc, {asg}, who);
        }
        if (vk.has_policy()) config::apply_overrides(*fdoc, {vk.policy_key + "=" + p});
        vk.parse(fdoc);
      } catch (const config::ConfigError& e) {
        throw config::ConfigError(std::string(e.what()) + (v.name.empty() ? "" : " (variant '" + v.name + "')") +
                                  " [study " + path + "]");
      }
    }
  }
}

}  // namespace

Study load_study(const std::string& path) {
  auto doc = std::make_shared<config::Document>(config::load_document(path));
  Study st;
  st.file = path;
  config::Section root = config::root_section(doc);
  if (!root.has("study")) {
    if (root.has("fabric")) root.fail("fabric", "this file is a fabric, not a study: run it with `fabricsim run FILE`");
    root.expect_keys({"study"});  // a misspelt `study:` gets a suggestion
  }
  config::Section s = root.child("study");
  // A misspelt key first: `sedes:` would otherwise show as `seeds` missing.
  s.expect_keys({"name", "fabric", "policies", "seeds", "set", "columns", "metrics", "variants", "grid"});
  study_name_and_fabric(s, path, st);
  const RunKind& kind = run_kind(st.fabric_kind);
  study_policies_and_seeds(s, kind, st);
  st.common = s.assignments("set", &st.common_lines, &st.common_columns);
  study_columns(s, kind, st);
  reject_axis_keys(s, "set", st.common, kind.policy_key);
  std::vector<config::Section> sections;
  std::vector<StudyVariant> declared = declared_variants(s, path, kind, st, sections);
  st.declared_variants = !declared.empty();
  if (declared.empty()) declared.push_back(StudyVariant{});
  st.variants = declared;
  check_variant_columns(s, sections, st);
  // grid: key.path: [v1, v2, ...] -> cartesian product with the variants.
  std::map<std::string, std::pair<int, int>> grid_lines;
  const Grid grid = study_grid(*doc, s, kind.policy_key, fs::path(st.fabric).parent_path(), grid_lines);
  // An assignment sets grid key `key` if it names it, a key under it, or a
  // map above it that holds it (`traffic={flits: 5}` sets traffic.flits).
  const auto overlaps = [](const std::string& assignment, const std::string& key) {
    const std::size_t eq = assignment.find('=');
    const std::string a = assignment.substr(0, eq);
    if (a == key || a.compare(0, key.size() + 1, key + ".") == 0) return true;
    if (key.compare(0, a.size() + 1, a + ".") != 0 || eq == std::string::npos) return false;
    try {
      YAML::Node n = YAML::Load(assignment.substr(eq + 1));
      std::stringstream rest(key.substr(a.size() + 1));
      for (std::string part; std::getline(rest, part, '.');) {
        if (!n.IsMap()) return false;
        const YAML::Node child = static_cast<const YAML::Node&>(n)[part];  // const lookup: never inserts
        if (!child.IsDefined()) return false;
        n.reset(child);  // (operator= would assign through n)
      }
      return true;
    } catch (const YAML::Exception&) {
      return false;
    }
  };
  for (const auto& [key, vals] : grid)
    for (std::size_t i = 0; i < st.common.size(); ++i)
      if (overlaps(st.common[i], key))
        s.fail("grid", fmt::format("'{}' is also in study.set (line {}): the grid's values would override it at "
                                   "every point; keep it in one of the two",
                                   key, i < st.common_lines.size() ? st.common_lines[i] : 0));
  // A grid key that a declared variant also sets: the grid's values would
  // replace the variant's at every point (as for study.set above).
  for (std::size_t vi = 0; vi < declared.size(); ++vi)
    for (std::size_t i = 0; i < declared[vi].assignments.size(); ++i)
      for (const auto& [key, vals] : grid)
        if (overlaps(declared[vi].assignments[i], key))
          s.fail("grid", fmt::format("'{}' is also set by variant '{}' (line {}): the grid's values would override "
                                     "it at every point of that variant; keep it in one of the two",
                                     key, declared[vi].name,
                                     i < declared[vi].assignment_lines.size() ? declared[vi].assignment_lines[i] : 0));
  // The number of points, before any is made (a point's plan takes ~1 KB).
  {
    std::uint64_t grid_points = 1;
    for (const auto& [key, vals] : grid)
      grid_points = std::min<std::uint64_t>(grid_points * vals.size(), kMaxPoints + 1);
    std::uint64_t points = 0;
    for (const auto& v : declared) {
      const std::uint64_t per = variant_policies(st, v).size() * (v.seeds.empty() ? st.seeds.size() : v.seeds.size());
      points = std::min<std::uint64_t>(points + per * grid_points, kMaxPoints + 1);
    }
    if (points > kMaxPoints)
      s.fail(grid.empty() ? "seeds" : "grid",
             fmt::format("the study has more than {} points (variants x policies x seeds x grid values), the "
                         "limit: split it into several studies",
                         kMaxPoints));
  }
  s.finish();
  root.finish();
  st.variants = expand_grid(declared, grid);
  validate_points(st, path, grid_lines);
  return st;
}

namespace {

struct Point {
  std::string variant;
  std::string policy;
  std::uint64_t seed;
  std::string dir;
  std::vector<std::string> args;
  std::size_t cell = 0;
};

std::string cell_text(const nlohmann::json& v) {
  if (v.is_null()) return "";  // e.g. no completion time after a terminal failure
  if (v.is_string()) {
    // RFC 4180: a field holding a comma, quote or newline is quoted, quotes doubled ("0,4,8,12").
    const std::string t = v.get<std::string>();
    if (t.find_first_of(",\"\n") == std::string::npos) return t;
    std::string q = "\"";
    for (char c : t) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  }
  if (v.is_number_unsigned() || v.is_number_integer()) return v.dump();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_float()) return fmt::format("{:.4f}", v.get<double>());
  return report::json_text(v);
}

std::string pt_variant_text(const Point& pt) { return cell_text(nlohmann::json(pt.variant)); }

std::string join_args(const std::vector<std::string>& a) {
  std::string s;
  for (const auto& x : a) s += x + "\n";
  return s;
}

pid_t spawn_point(const std::string& exe, const Point& pt) {
  std::vector<std::string> argv{exe};
  argv.insert(argv.end(), pt.args.begin(), pt.args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  const std::string log = (fs::path(pt.dir) / "run.log").string();
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  // The sweep blocks SIGINT / SIGTERM while it starts a point: the point must
  // not inherit that mask, or it could not be interrupted.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, exe.c_str(), &fa, &attr, cargv.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error(fmt::format("cannot start {}: {}", exe, std::strerror(rc)));
  return pid;
}

}  // namespace

namespace {
// Interruption (SIGINT / SIGTERM): the handler records the signal and passes
// it on to the running points; the sweep loop then stops, keeps the finished
// points and writes no tables.
volatile std::sig_atomic_t g_signal = 0;
constexpr std::size_t kMaxChildren = 1024;  // --jobs is at most 1024
volatile pid_t g_children[kMaxChildren] = {};

extern "C" void on_sweep_signal(int sig) {
  g_signal = sig;
  for (std::size_t i = 0; i < kMaxChildren; ++i)
    if (g_children[i] > 0) kill(g_children[i], sig);
}

struct SignalGuard {  // installs the handler (unless the signal is ignored, as under nohup) for one sweep
  struct sigaction old_int {
  }, old_term{}, old_hup{};
  SignalGuard() {
    g_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_sweep_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: waitpid returns EINTR
    for (auto [sig, old] : {std::pair{SIGINT, &old_int}, std::pair{SIGTERM, &old_term}, std::pair{SIGHUP, &old_hup}}) {
      sigaction(sig, nullptr, old);
      if (old->sa_handler != SIG_IGN) sigaction(sig, &sa, nullptr);
    }
  }
  ~SignalGuard() {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    sigaction(SIGHUP, &old_hup, nullptr);
  }
};

const char* signal_name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
}

// The second line of result.stamp: the hash of the point's args.txt.
std::string stamp_args_line(const std::string& args_text) { return "args " + report::fnv1a64_hex(args_text) + "\n"; }

// Why a point's previous result cannot be reused ("" = reusable). A point is
// reused only if its result.json is the one this sweep recorded after the
// point finished (result.stamp), was written by this very program (version and
// build id), with the same arguments, from input files (fabric, ladders, ...)
// whose bytes are unchanged.
std::string stale_reason(const Point& pt, const std::string& args_text) {
  const fs::path d(pt.dir);
  std::string text, stamp, prev_args;
  if (!read_file(d / "result.json", text)) return "not run yet";
  if (!read_file(d / "result.stamp", stamp)) return "result.json not recorded as finished by a sweep";
  const std::string first = stamp.substr(0, stamp.find('\n') + 1), rest = stamp.substr(first.size());
  if (first.rfind("fnv1a64 ", 0) != 0) return "result.stamp is incomplete";
  if (first != "fnv1a64 " + report::fnv1a64_hex(text) + "\n") return "result.json was modified after the run";
  if (!read_file(d / "args.txt", prev_args) || prev_args != args_text) return "arguments changed";
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception&) {
    return "result.json is not valid JSON";
  }
  if (!j.contains("run") || !j["run"].is_object() || !j["run"].contains("program"))
    return "result.json has no run identity (older program)";
  if (!j["run"].contains("seed") || !j["run"]["seed"].is_number_unsigned() ||
      j["run"]["seed"].get<std::uint64_t>() != pt.seed)
    return "result.json was made by another point (another seed)";
  const auto& prog = j["run"]["program"];
  const auto& me = report::program_identity();
  if (prog.value("version", "") != me["version"].get<std::string>() ||
      prog.value("build_id", "") != me["build_id"].get<std::string>())
    return "made by another build of fabricsim";
  // The stamp also names the arguments of the point that wrote the result:
  // a result copied in from another point's folder is not this point's.
  if (rest != stamp_args_line(args_text)) return "result.json was made by another point (its stamp names other arguments)";
  if (!j["run"].contains("inputs") || !j["run"]["inputs"].is_array()) return "result.json lists no input files";
  for (const auto& in : j["run"]["inputs"]) {
    const std::string f = in.value("file", "");
    if (in.value("absent", false)) {  // looked for and not found by the run
      if (config::is_file(f)) return f + " now exists (the run looked for it first and used another file)";
      continue;
    }
    std::string now;
    if (!read_file(f, now)) return f + " is gone";
    if (report::fnv1a64_hex(now) != in.value("fnv1a64", "")) return f + " changed";
  }
  return "";
}

// Fail with exit status 2 (bad input) unless `dir` can be created and written.
void require_writable_dir(const fs::path& dir, const std::string& what) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw config::ConfigError(fmt::format("{} '{}': exists and is not a folder", what, dir.string()));
  if (const std::string l = report::dangling_symlink_on(dir); !l.empty())
    throw config::ConfigError(
        fmt::format("{} '{}': the path runs through a symbolic link to nothing ({}): create "
                    "its target or name another folder",
                    what, dir.string(), l));
  std::vector<fs::path> missing;  // deepest first: removed again if the creation fails part of the way
  for (fs::path p = fs::absolute(dir, ec).lexically_normal();
       !p.empty() && !fs::exists(fs::symlink_status(p, ec)) && p != p.parent_path(); p = p.parent_path())
    missing.push_back(p);
  fs::create_directories(dir, ec);
  if (ec) {
    const std::string why = ec.message();
    for (const fs::path& p : missing) fs::remove(p, ec);  // only empty folders; a missing one is skipped
    throw config::ConfigError(fmt::format("{} '{}': cannot create the folder: {}", what, dir.string(), why));
  }
  const fs::path probe = dir / fmt::format(".fabricsim-write-test-{}", getpid());
  {
    std::ofstream f(probe);
    if (!f) throw config::ConfigError(fmt::format("{} '{}': the folder is not writable", what, dir.string()));
  }
  fs::remove(probe, ec);
}

// Before any point runs: what the sweep will replace in --out must be files
// (a folder or device where results.csv, a point's folder or its result.json
// go would fail after the points ran), and points/ a writable folder. Exit 2.
void require_sweep_outputs_replaceable(const fs::path& out, const std::vector<Point>& points) {
  std::error_code ec;
  auto fail = [&](const fs::path& p, const std::string& why) {
    throw config::ConfigError(
        fmt::format("--out '{}': '{}' there {}", out.string(), p.lexically_relative(out).string(), why));
  };
  auto replaceable = [&](const fs::path& p) {
    const fs::file_status st = fs::symlink_status(p, ec);
    if (fs::exists(st) && !fs::is_regular_file(st) && !fs::is_symlink(st))
      fail(p, "is not a file the sweep can replace (a folder?)");
    // The study, its fabric or a file they name, kept under an output's name.
    if (fs::exists(st))
      for (const auto& [input, hash] : config::files_read())
        if (fs::equivalent(p, input, ec))
          fail(p,
               fmt::format("is {}, an input of this sweep, and the sweep would replace it: name another --out", input));
  };
  for (const char* t : {"results.csv", "summary.json", "results.csv.tmp", "summary.json.tmp"}) replaceable(out / t);
  const fs::path pts = out / "points";
  if (fs::exists(pts, ec)) {
    if (!fs::is_directory(pts, ec)) fail(pts, "is not a folder (the points' results go there)");
    require_writable_dir(pts, "--out");
  }
  for (const Point& pt : points) {
    const fs::path d(pt.dir);
    if (!fs::exists(d, ec)) continue;
    if (!fs::is_directory(d, ec)) fail(d, "is not a folder (a point's results go there)");
    for (const char* f : {"result.json", "result.stamp", "args.txt", "args.txt.tmp"}) replaceable(d / f);
  }
}

// Two sweeps writing one --out would remove and rewrite each other's tables
// and points. The folder is locked for this process's life (flock on the
// folder itself, so nothing is added to it): exclusively by a whole sweep,
// --collect and MPI rank 0, shared by a --shard (the shares of a job array
// run at once). A share I/N also locks points/.share-I-of-N.lock
// exclusively, so the same share started twice (a requeued array task while
// the first still runs) is refused, and every share of a split into N
// shares holds points/.split-of-N.lock shared, so that a share of another
// split (2/3 while 2/4 runs: their points overlap, and both would run the
// common ones) is refused: it finds a .split-of-M.lock it cannot lock
// exclusively. (Two shares of different splits started in the same instant
// may both be refused.) A file system without flock (ENOLCK, some NFS) is
// not locked. Throws ConfigError (exit 2) if another sweep holds the folder
// or the share, or shares of another split run there.
void lock_share(const fs::path& out, unsigned index, unsigned count) {
  std::error_code ec;
  fs::create_directories(out / "points", ec);  // require_writable_dir has vouched for out
  // This split first (blocking: another split's probe below holds it only for an instant), then the others.
  const fs::path own = out / "points" / fmt::format(".split-of-{}.lock", count);
  if (const int sfd = ::open(own.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644); sfd >= 0) {
    if (::flock(sfd, LOCK_SH) != 0) ::close(sfd);  // else held until exit
  }
  for (const auto& e : fs::directory_iterator(out / "points", ec)) {
    const std::string name = e.path().filename().string();
    unsigned m = 0;
    char tail = 0;
    if (std::sscanf(name.c_str(), ".split-of-%u.loc%c", &m, &tail) != 2 || tail != 'k' ||
        name != fmt::format(".split-of-{}.lock", m) || m == count)
      continue;
    const int pfd = ::open(e.path().c_str(), O_RDWR | O_CLOEXEC);
    if (pfd < 0) continue;
    const bool busy = ::flock(pfd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    ::close(pfd);  // (releases the probe's lock)
    if (busy)
      throw config::ConfigError(fmt::format(
          "--out '{}': shares of a split into {} are running there; a share of {} would overlap their points "
          "(both would run the common ones): give every share of one folder the same N, or wait for them to end",
          out.string(), m, count));
  }
  const fs::path f = out / "points" / fmt::format(".share-{}-of-{}.lock", index, count);
  const int fd = ::open(f.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;                               // points/ not a folder: require_sweep_outputs_replaceable says so
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return;  // held until exit
  const int err = errno;
  ::close(fd);
  if (err != EWOULDBLOCK) return;
  throw config::ConfigError(
      fmt::format("--out '{}': share {}/{} is already running there (another process holds {}); wait for it to end, or "
                  "run another share",
                  out.string(), index, count, f.string()));
}

void lock_sweep_out(const fs::path& out, bool shared) {
  static bool held = false;  // a second flock of this process would meet its own
  if (held) return;
  switch (report::lock_output_folder(out, shared)) {
    case report::FolderLock::held: held = true; return;  // until exit
    case report::FolderLock::unsupported: return;
    case report::FolderLock::no_read_permission:
      throw config::ConfigError(
          fmt::format("--out '{}': the folder cannot be locked against a second sweep (no "
                      "read permission on it): chmod u+r it",
                      out.string()));
    case report::FolderLock::busy:
      throw config::ConfigError(fmt::format(
          "--out '{}': another sweep or run is writing there ({}); wait for it to end or name another --out",
          out.string(), shared ? "a run, a whole sweep or --collect" : "a run, a sweep, a share or --collect"));
  }
}
}  // namespace

std::string folder_name(const std::string& name) {
  std::string f = name;
  for (char& ch : f)
    if (ch == '/' || ch == '\\' || ch == ' ') ch = '_';
  return f;
}

namespace {

// Longest variant tag kept whole in a point's folder name (cNNN-TAG).
constexpr std::size_t kMaxTagBytes = 120;

std::vector<Point> make_points(const Study& st, const fs::path& out) {
  std::vector<Point> points;
  for (std::size_t vi = 0; vi < st.variants.size(); ++vi) {
    const auto& v = st.variants[vi];
    const auto& seeds = v.seeds.empty() ? st.seeds : v.seeds;
    const bool no_policy = !variant_kind(st, v).has_policy();
    for (const auto& p : variant_policies(st, v))
      for (auto s : seeds) {
        Point pt{v.name, p, s, "", {}};
        pt.cell = vi;
        fs::path d = out / "points";
        if (st.variants.size() > 1) {
          std::string tag = folder_name(v.name);
          // A grid point's name joins its keys and values and can outgrow a
          // folder name (255 bytes): keep its first 100 bytes (whole UTF-8
          // characters) and a hash of the whole name.
          if (tag.size() > kMaxTagBytes) {
            std::size_t cut = 100;
            while (cut > 0 && (static_cast<unsigned char>(tag[cut]) & 0xC0) == 0x80) --cut;
            tag = tag.substr(0, cut) + "~" + report::fnv1a64_hex(v.name);
          }
          d /= fmt::format("c{:03d}{}", vi, tag.empty() ? "" : "-" + tag);
        }
        if (!no_policy) d /= p;
        d /= fmt::format("s{}", s);
        pt.dir = d.string();
        pt.args = {"run", variant_fabric(st, v), "--seed", std::to_string(s), "--quiet", "--out", pt.dir};
        if (!no_policy) pt.args.insert(pt.args.begin() + 4, {"--policy", p});
        for (const auto& a : st.common) pt.args.insert(pt.args.end(), {"--set", a});
        for (const auto& a : v.assignments) pt.args.insert(pt.args.end(), {"--set", a});
        points.push_back(pt);
      }
  }
  return points;
}

void track_child(pid_t pid, bool add) {
  for (std::size_t i = 0; i < kMaxChildren; ++i)
    if (add ? g_children[i] == 0 : g_children[i] == pid) {
      g_children[i] = add ? pid : 0;
      return;
    }
}

// Start one point's `fabricsim run` (its folder prepared, args.txt written).
pid_t start_point(const std::string& exe, const Point& pt) {
  fs::create_directories(pt.dir);
  for (const char* f : {"result.json", "result.stamp"}) fs::remove(fs::path(pt.dir) / f);
  write_atomic(fs::path(pt.dir) / "args.txt", join_args(pt.args));
  // Block the signals while the child starts, so none is missed between spawn and track.
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGHUP);
  sigprocmask(SIG_BLOCK, &block, &old);
  const pid_t pid = spawn_point(exe, pt);
  track_child(pid, true);
  sigprocmask(SIG_SETMASK, &old, nullptr);
  return pid;
}

// After a point's process ended: record a finished point (result.stamp);
// returns its exit status (minus the signal's number if it died by one).
int finish_point(const Point& pt, int status) {
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    std::string text;
    if (read_file(fs::path(pt.dir) / "result.json", text)) {
      write_atomic(fs::path(pt.dir) / "result.stamp",
                   "fnv1a64 " + report::fnv1a64_hex(text) + "\n" + stamp_args_line(join_args(pt.args)));
      return 0;
    }
    return 1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? -WTERMSIG(status) : -1;
}

std::string failure_text(const Point& pt, int code) {
  std::string log;
  read_file(fs::path(pt.dir) / "run.log", log);
  const std::string name =
      fmt::format("point {}{}/s{}", pt.variant.empty() ? "" : pt.variant + "/", pt.policy, pt.seed);
  // A point that said nothing: name the signal, or say so (its run.log is
  // where a diagnosis would be; a full disk can lose it too).
  if (code < 0)
    return fmt::format("{} was killed by signal {} ({}){}{}", name, -code, strsignal(-code),
                       -code == SIGKILL ? ", e.g. by the kernel when memory ran out" : "",
                       log.empty() ? "" : ": " + log);
  if (log.empty())
    return fmt::format("{} failed (exit {}) and its {}/run.log is empty (no diagnosis written: a full disk?)", name,
                       code, pt.dir);
  return fmt::format("{} failed (exit {}): {}", name, code, log);
}

struct Outcome {
  std::size_t done = 0;  ///< points finished (reused included)
  std::size_t failed = 0;
  std::string first_failure;
};

struct Progress {
  bool tty;
  std::string name;
  std::size_t total;
  unsigned jobs;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  void show(std::size_t done) const {
    if (!tty) return;
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "\r[sweep %s] %zu/%zu points, %u jobs, %.0fs elapsed ", name.c_str(), done, total, jobs, el);
    std::fflush(stderr);
  }
};

// Run `todo` as local processes, opt.jobs at a time.
void run_local(const std::vector<Point>& points, const std::vector<std::size_t>& todo, const SweepOptions& opt,
               const Progress& pr, Outcome& oc) {
  std::size_t next = 0;
  std::map<pid_t, std::size_t> running;
  pr.show(oc.done);
  while (next < todo.size() || !running.empty()) {
    while (oc.failed == 0 && !g_signal && next < todo.size() && running.size() < opt.jobs) {
      running[start_point(opt.self_exe, points[todo[next]])] = todo[next];
      ++next;
    }
    if (running.empty()) break;
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;
    track_child(pid, false);
    const Point& pt = points[it->second];
    running.erase(it);
    const int code = finish_point(pt, status);
    if (code == 0) {
      ++oc.done;
    } else if (!g_signal) {
      ++oc.failed;
      ++oc.done;
      if (oc.first_failure.empty()) oc.first_failure = failure_text(pt, code);
    }
    pr.show(oc.done);
  }
}

// --- MPI (mpirun -np K fabricsim sweep ...) ----------------------------------
// Rank 0 hands out point indices as ranks become free (so uneven points
// balance); ranks 1..K-1 run one point at a time as a local process and report
// its exit status. Every rank sees the same output folder (a shared file
// system on a cluster). Waiting polls with short sleeps, so that an idle rank
// does not spin a core.
#ifdef FABRICSIM_MPI
constexpr int kTagReady = 1, kTagAssign = 2;

void wait_request(MPI_Request& req, MPI_Status& st) {
  int flag = 0;
  while (true) {
    MPI_Test(&req, &flag, &st);
    if (flag) return;
    struct timespec ts {
      0, 2'000'000
    };
    nanosleep(&ts, nullptr);
  }
}

void mpi_master(int size, const std::vector<Point>& points, const std::vector<std::size_t>& todo, const Progress& pr,
                Outcome& oc, std::vector<std::size_t>& per_rank) {
  per_rank.assign(static_cast<std::size_t>(size), 0);
  int active = size - 1;
  std::size_t next = 0;
  pr.show(oc.done);
  while (active > 0) {
    int msg[2];
    MPI_Request req;
    MPI_Status stt;
    MPI_Irecv(msg, 2, MPI_INT, MPI_ANY_SOURCE, kTagReady, MPI_COMM_WORLD, &req);
    wait_request(req, stt);
    if (msg[0] >= 0) {  // a finished point
      const Point& pt = points[static_cast<std::size_t>(msg[0])];
      if (msg[1] == 0) {
        ++oc.done;
      } else if (!g_signal) {
        ++oc.failed;
        ++oc.done;
        if (oc.first_failure.empty()) oc.first_failure = failure_text(pt, msg[1]);
      }
      pr.show(oc.done);
    }
    int assign = -1;
    if (oc.failed == 0 && !g_signal && next < todo.size()) {
      assign = static_cast<int>(todo[next++]);
      ++per_rank[static_cast<std::size_t>(stt.MPI_SOURCE)];
    }
    MPI_Send(&assign, 1, MPI_INT, stt.MPI_SOURCE, kTagAssign, MPI_COMM_WORLD);
    if (assign < 0) --active;
  }
}

void mpi_worker(const std::vector<Point>& points, const SweepOptions& opt) {
  int msg[2] = {-1, 0};
  while (true) {
    MPI_Send(msg, 2, MPI_INT, 0, kTagReady, MPI_COMM_WORLD);
    int assign = -1;
    MPI_Request req;
    MPI_Status stt;
    MPI_Irecv(&assign, 1, MPI_INT, 0, kTagAssign, MPI_COMM_WORLD, &req);
    wait_request(req, stt);
    if (assign < 0 || static_cast<std::size_t>(assign) >= points.size()) return;
    const Point& pt = points[static_cast<std::size_t>(assign)];
    const pid_t pid = start_point(opt.self_exe, pt);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    track_child(pid, false);
    msg[0] = assign;
    msg[1] = finish_point(pt, status);
  }
}

struct MpiSession {  // MPI_Init / MPI_Finalize around one sweep
  int rank = 0, size = 1;
  MpiSession() {
    MPI_Init(nullptr, nullptr);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  }
  ~MpiSession() { MPI_Finalize(); }
};
#endif

int collect_tables(const Study& st, const std::vector<Point>& points, const fs::path& out);

}  // namespace

bool mpi_available() {
#ifdef FABRICSIM_MPI
  return true;
#else
  return false;
#endif
}

int mpi_launch_size() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (const char* e = std::getenv(v)) return std::max(1, std::atoi(e));
  return std::getenv("PMIX_RANK") ? 2 : 1;  // PMIx without a size: assume a parallel launch
}

bool mpi_secondary_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char* e = std::getenv(v)) return std::atoi(e) != 0;
  return false;
}

namespace {

#ifdef FABRICSIM_MPI
// Under mpirun: ranks other than 0 wait for rank 0 to prepare the output
// folder (it may refuse it), then run points for it; returns true there
// (their part is done). Rank 0 checks the folder first and tells them.
bool mpi_secondary_part(int rank, int size, const std::vector<Point>& points, const SweepOptions& opt,
                        const fs::path& out) {
  if (rank != 0) {
    // Wait for rank 0 to prepare the output folder (it may refuse it).
    int ok = 0;
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (ok) mpi_worker(points, opt);
    return true;
  }
  if (size > 1) {
    int ok = 0;
    try {
      require_writable_dir(out, "--out");
      lock_sweep_out(out, false);
      require_sweep_outputs_replaceable(out, points);
      ok = 1;
    } catch (...) {
      MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
      throw;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  }
  return false;
}
#endif

// This invocation's points: all, or one share (--shard I/N: every N-th point
// from the I-th, in the study's fixed order).
std::vector<std::size_t> shard_scope(const std::vector<Point>& points, const SweepOptions& opt) {
  std::vector<std::size_t> scope;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (!opt.shard_count || i % opt.shard_count == opt.shard_index - 1) scope.push_back(i);
  return scope;
}

// Resume: reuse a point only if nothing that determines its result changed.
// The points of `scope` to run, and why ("<n> <reason>, ..." in first-seen order).
struct ResumePlan {
  std::vector<std::size_t> todo;
  std::string why;
};
ResumePlan resume_plan(const std::vector<Point>& points, const std::vector<std::size_t>& scope, bool fresh) {
  ResumePlan plan;
  std::vector<std::pair<std::string, std::size_t>> reasons;  // why points rerun, first-seen order
  for (std::size_t i : scope) {
    const std::string why = fresh ? "--fresh" : stale_reason(points[i], join_args(points[i].args));
    if (why.empty()) continue;
    plan.todo.push_back(i);
    auto it = std::find_if(reasons.begin(), reasons.end(), [&](const auto& r) { return r.first == why; });
    if (it == reasons.end())
      reasons.emplace_back(why, 1);
    else
      ++it->second;
  }
  for (const auto& [r, n] : reasons) plan.why += fmt::format("{}{} {}", plan.why.empty() ? "" : ", ", n, r);
  return plan;
}

// --collect: the tables from finished points only (exit 3 if any is missing or stale).
int collect_finished(const Study& st, const std::vector<Point>& points, const ResumePlan& plan,
                     const std::string& label, const fs::path& out) {
  if (!plan.todo.empty()) {
    std::cerr << fmt::format(
        "error: cannot collect {}: {} of {} points are missing or stale ({}; first: {}); run every share "
        "(--shard I/N) with this program and this --out first (a point run with other arguments, e.g. in a "
        "folder copied from elsewhere, is stale and runs again)\n",
        st.name, plan.todo.size(), points.size(), plan.why, points[plan.todo.front()].dir);
    return 3;
  }
  std::cout << fmt::format("{}: collecting {} finished points\n", label, points.size());
  return collect_tables(st, points, out);
}

// Parallel runs start the most expensive points first (by the run kinds'
// cost estimates; equal estimates keep the study's order), so that the jobs
// do not end with one long point running alone. Only if every point to run
// has an estimate; otherwise, and with one job, the study's order. Results
// do not depend on the order (each point is its own process and directory;
// the tables are written in the study's order).
struct RunOrder {
  std::vector<std::size_t> todo;
  bool reordered = false;
  double first_s = 0, total_s = 0;  ///< estimates: the first point's, all points'
};
RunOrder costliest_first(const Study& st, const std::vector<Point>& points, const std::vector<std::size_t>& todo) {
  RunOrder o{todo};
  std::map<std::pair<std::size_t, std::string>, double> by_cell;  // (variant, policy) -> estimate
  std::vector<double> cost(points.size(), 0.0);
  for (std::size_t i : todo) {
    const Point& pt = points[i];
    const auto key = std::make_pair(pt.cell, pt.policy);
    auto it = by_cell.find(key);
    if (it == by_cell.end()) {
      const StudyVariant& v = st.variants[pt.cell];
      const RunKind& vk = variant_kind(st, v);
      if (!vk.cost) return o;
      std::vector<std::string> a = st.common;
      a.insert(a.end(), v.assignments.begin(), v.assignments.end());
      if (vk.has_policy()) a.push_back(vk.policy_key + "=" + pt.policy);
      it = by_cell.emplace(key, vk.cost(config::load_with_overrides(variant_fabric(st, v), a))).first;
    }
    cost[i] = it->second;
    o.total_s += cost[i];
  }
  std::stable_sort(o.todo.begin(), o.todo.end(), [&](std::size_t x, std::size_t y) { return cost[x] > cost[y]; });
  o.reordered = o.todo != todo;
  if (!o.todo.empty()) o.first_s = cost[o.todo.front()];
  return o;
}

// Run the points to do: over the MPI ranks (size > 1) or in local processes.
void run_points(const std::vector<Point>& points, const std::vector<std::size_t>& todo, const SweepOptions& opt,
                const Progress& pr, Outcome& oc, [[maybe_unused]] int size, [[maybe_unused]] const std::string& label) {
#ifdef FABRICSIM_MPI
  std::vector<std::size_t> per_rank;
  if (size > 1)
    mpi_master(size, points, todo, pr, oc, per_rank);
  else
    run_local(points, todo, opt, pr, oc);
  if (size > 1) {
    std::string ranks;
    for (std::size_t r = 1; r < per_rank.size(); ++r) ranks += fmt::format("{}{}", r > 1 ? ", " : "", per_rank[r]);
    std::cout << fmt::format("{}: points run per MPI rank 1..{}: {}\n", label, size - 1, ranks);
  }
#else
  run_local(points, todo, opt, pr, oc);
#endif
}

// After the points ran: an interruption (exit 128 + signal) or failures (exit
// 3) write no table; a share says how to collect; else the tables.
int finish_sweep(const Study& st, const std::vector<Point>& points, const SweepOptions& opt, const fs::path& out,
                 const std::string& label, const Outcome& oc, std::size_t scope_size) {
  if (g_signal) {
    std::cerr << fmt::format(
        "interrupted ({}): {} stopped with {} of {} points finished; they are kept in {}/points and a rerun of "
        "the same command resumes from them; results.csv and summary.json not written\n",
        signal_name(g_signal), label, oc.done, scope_size, out.string());
    return 128 + g_signal;
  }
  if (oc.failed) {
    std::cerr << "error: " << oc.first_failure
              << (oc.first_failure.empty() || oc.first_failure.back() != '\n' ? "\n" : "");
    std::cerr << fmt::format("error: {} point(s) failed; results.csv and summary.json not written\n", oc.failed);
    return 3;
  }
  if (opt.shard_count) {
    std::cout << fmt::format(
        "{}: done; `fabricsim sweep {} --collect --out {}` writes the tables once every share "
        "is done\n",
        label, st.file, out.string());
    return 0;
  }
  // An input changed while the points ran (the fabric edited mid-sweep):
  // the finished points would mix its two versions in one table.
  std::vector<std::size_t> all(points.size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  if (const ResumePlan now = resume_plan(points, all, false); !now.todo.empty()) {
    std::cerr << fmt::format(
        "error: {} of {} points no longer match their inputs ({}; first: {}): an input changed while the sweep "
        "ran, so the points would mix its versions; results.csv and summary.json not written; the same command "
        "reruns those points\n",
        now.todo.size(), points.size(), now.why, points[now.todo.front()].dir);
    return 3;
  }
  const int rc = collect_tables(st, points, out);
  // An interrupt while the tables were made: they are whole (written
  // atomically) or absent; say which, and end as an interrupted sweep.
  if (g_signal) {
    std::cerr << fmt::format("interrupted ({}): after {} had run every point; {}\n", signal_name(g_signal), label,
                             rc == 0 ? "results.csv and summary.json in " + out.string() + " are complete"
                                     : "results.csv and summary.json not written");
    return 128 + g_signal;
  }
  return rc;
}

}  // namespace

int run_sweep(const Study& st, const SweepOptions& opt) {
  const fs::path out(opt.out_dir);
  // The points' runs inherit it (see kSweepPointEnv): this process's id, so
  // that a point ends with the sweep that started it (a sweep killed with
  // SIGKILL leaves no point running on).
  ::setenv(kSweepPointEnv, std::to_string(::getpid()).c_str(), 1);
  [[maybe_unused]] int rank = 0, size = 1;
#ifdef FABRICSIM_MPI
  std::unique_ptr<MpiSession> mpi;
  if (mpi_launch_size() > 1) {
    mpi = std::make_unique<MpiSession>();
    rank = mpi->rank;
    size = mpi->size;
  }
#else
  if (mpi_launch_size() > 1)
    throw config::ConfigError(fmt::format(
        "started by mpirun with {} ranks, but this fabricsim was built without MPI (install libopenmpi-dev, "
        "rebuild); or use --shard I/N and --collect",
        mpi_launch_size()));
#endif
  if (size > 1 && (opt.shard_count || opt.collect))
    throw config::ConfigError("--shard and --collect are for batch schedulers; under mpirun give neither");
  const std::vector<Point> points = make_points(st, out);
  SignalGuard guard;
#ifdef FABRICSIM_MPI
  if (mpi_secondary_part(rank, size, points, opt, out)) return 0;
#endif
  // --collect runs nothing: a folder that is not there has no finished point
  // (exit 3 below) and is not created.
  std::error_code oe;
  if (!opt.collect || fs::exists(out, oe)) {
    require_writable_dir(out, "--out");
    lock_sweep_out(out, opt.shard_count != 0);
    if (opt.shard_count && !opt.collect) lock_share(out, opt.shard_index, opt.shard_count);
    require_sweep_outputs_replaceable(out, points);
  }
  // A failed or interrupted sweep must leave no table that could be taken for
  // its result: the previous ones go before anything runs.
  for (const char* t : {"results.csv", "summary.json", "results.csv.tmp", "summary.json.tmp"}) fs::remove(out / t);

  const std::vector<std::size_t> scope = shard_scope(points, opt);
  const std::string label = opt.shard_count
                                ? fmt::format("sweep {} share {}/{}", st.name, opt.shard_index, opt.shard_count)
                                : fmt::format("sweep {}", st.name);
  if (opt.shard_count && scope.empty())
    std::cerr << fmt::format(
        "warning: {} holds no point: the study has {} point(s), so shares {}..{} of {} are empty\n", label,
        points.size(), points.size() + 1, opt.shard_count, opt.shard_count);
  const ResumePlan plan = resume_plan(points, scope, opt.fresh);
  if (opt.collect) return collect_finished(st, points, plan, label, out);
  const RunOrder order = opt.jobs > 1 || size > 1 ? costliest_first(st, points, plan.todo) : RunOrder{plan.todo};
  const auto& todo = order.todo;
  const std::string& why = plan.why;
  std::cout << fmt::format("{}: {} points{}, {} reused, {} to run{}{}\n", label, scope.size(),
                           opt.shard_count ? fmt::format(" of {}", points.size()) : "", scope.size() - todo.size(),
                           todo.size(), why.empty() ? "" : " (" + why + ")",
                           size > 1 ? fmt::format(", over {} MPI ranks", size - 1) : "");
  if (order.reordered) {
    auto secs = [](double s) { return s < 10 ? fmt::format("{:.2f}", s) : fmt::format("{:.0f}", s); };
    std::cout << fmt::format("{}: costliest points first (estimated {} CPU-s in all; first {}, {} s)\n", label,
                             secs(order.total_s), points[todo.front()].dir, secs(order.first_s));
  }
  std::cout.flush();

  const bool tty = opt.progress && isatty(2);
  const Progress pr{tty, st.name, scope.size(), size > 1 ? static_cast<unsigned>(size - 1) : opt.jobs};
  Outcome oc;
  oc.done = scope.size() - todo.size();
  run_points(points, todo, opt, pr, oc, size, label);
  if (tty) std::fprintf(stderr, "\n");
  return finish_sweep(st, points, opt, out, label, oc, scope.size());
}

namespace {

// Whether column `c` is a metric of some variant but not of point `pt`'s
// (its rows may lack it: written empty, not summarised).
bool foreign_metric(const Study& st, const std::vector<std::string>& every, const Point& pt, const std::string& c) {
  const auto& own = variant_metrics(st, st.variants[pt.cell]);
  return std::find(every.begin(), every.end(), c) != every.end() && std::find(own.begin(), own.end(), c) == own.end();
}

// Every point's result.json, each with every listed column in its row (but
// other variants' metrics); exit status 3 (after the message) if one is
// missing, else 0.
int read_results(const Study& st, const std::vector<Point>& points, std::vector<nlohmann::json>& results) {
  const std::vector<std::string> every = all_metrics(st);
  for (const auto& pt : points) {
    std::string text;
    if (!read_file(fs::path(pt.dir) / "result.json", text)) {
      std::cerr << "error: missing " << pt.dir << "/result.json\n";
      return 3;
    }
    results.push_back(nlohmann::json::parse(text));
    const auto& row = results.back().at("row");
    for (const auto& c : st.columns)
      if (c != "variant" && !row.contains(c) && !foreign_metric(st, every, pt, c)) {
        std::cerr << fmt::format("error: column '{}' is not in {}/result.json (row keys: {})\n", c, pt.dir,
                                 report::json_text(row));
        return 3;
      }
  }
  return 0;
}

// A variant whose every link runs RIFL (row.protocol "rifl" or "rifl+FEC")
// ignores the UALink link policy: with several policies its points repeat
// the same runs, and its paired deltas are zero. Said once per variant.
void warn_policies_without_effect(const Study& st, const std::vector<Point>& points,
                                  const std::vector<nlohmann::json>& results) {
  std::map<std::size_t, std::set<std::string>> policies;  // cell -> policies
  std::set<std::size_t> not_rifl;                          // cells with a point not all RIFL
  for (std::size_t i = 0; i < points.size(); ++i) {
    policies[points[i].cell].insert(points[i].policy);
    const auto& row = results[i].at("row");
    const auto it = row.find("protocol");
    if (it == row.end() || !it->is_string() || it->get<std::string>().rfind("rifl", 0) != 0)
      not_rifl.insert(points[i].cell);
  }
  std::vector<std::string> cells;
  std::size_t n_policies = 0;
  for (const auto& [cell, pol] : policies)
    if (pol.size() > 1 && !not_rifl.count(cell)) {
      cells.push_back(st.variants[cell].name);
      n_policies = pol.size();
    }
  if (cells.empty()) return;
  const std::string which = cells.size() == 1 && cells[0].empty() ? std::string("the study")
                            : cells.size() == 1 ? "variant '" + cells[0] + "'"
                                                : fmt::format("{} variants (first: '{}')", cells.size(), cells[0]);
  std::cerr << fmt::format(
      "warning: every link of {} runs RIFL, which has no UALink link policy: its {} policies' points are the same "
      "runs (paired deltas 0); run it under one policy\n",
      which, n_policies);
}

// results.csv always tells its points apart: if the listed columns (their
// non-metric values) leave two points of different variants, or of
// different seeds, looking alike, a leading variant / seed column is added.
// `per_seed` receives the non-metric columns whose value changes with the
// seed alone: results, not axes (they do not split cells).
void leading_columns(const Study& st, const std::vector<Point>& points, const std::vector<nlohmann::json>& results,
                     bool& variant_col, bool& seed_col, std::set<std::string>& per_seed) {
  const bool has_col_variant = std::find(st.columns.begin(), st.columns.end(), "variant") != st.columns.end();
  const bool has_col_seed = std::find(st.columns.begin(), st.columns.end(), "seed") != st.columns.end();
  variant_col = st.variants.size() > 1 && !st.explicit_columns && !has_col_variant;
  seed_col = false;
  const std::vector<std::string> every = all_metrics(st);
  std::map<std::string, std::size_t> seen;  // non-metric values -> first point
  // A non-metric column whose value changes with the seed alone is a result,
  // not an axis: it does not split the point's cell (its per-seed values go
  // to the cell's `per_seed` in summary.json). Said once per column, and the
  // rows get a seed column.
  std::map<std::pair<std::size_t, std::string>, std::size_t> first_seed;  // (cell, policy) -> first point
  std::set<std::string> warned;
  for (std::size_t i = 0; i < points.size(); ++i) {
    std::string key;
    const auto [fs, first] = first_seed.emplace(std::make_pair(points[i].cell, points[i].policy), i);
    for (const auto& c : st.columns)
      if (c == "variant") {
        key += pt_variant_text(points[i]) + ",";
      } else if (std::find(every.begin(), every.end(), c) == every.end()) {
        const std::string v = cell_text(results[i].at("row").at(c));
        const bool differs = !first && c != "seed" && v != cell_text(results[fs->second].at("row").at(c));
        if (differs && !has_col_seed) seed_col = true;  // the rows are told apart by their seeds
        if (differs) per_seed.insert(c);
        if (differs && warned.insert(c).second) {
          // A text column (mtbf_years: "inf", "n/a") cannot be a metric.
          const bool text = results[i].at("row").at(c).is_string();
          std::cerr << fmt::format(
              "warning: column '{}' differs between seeds of one point ({}: seed {} has {}, seed {} has {}); it is "
              "a result, not an axis: its per-seed values are in the rows and under each cell's `per_seed` in "
              "summary.json{}\n",
              c, points[i].dir, points[fs->second].seed, cell_text(results[fs->second].at("row").at(c)), points[i].seed,
              v,
              text ? " (it is text, so it cannot be a metric)"
                   : "; list it under the study's `metrics` to summarise it over the seeds");
        }
        key += v + ",";
      }
    auto [it, fresh] = seen.emplace(key, i);
    if (fresh) continue;
    const Point& other = points[it->second];
    if (other.cell != points[i].cell && !has_col_variant)
      variant_col = true;
    else if (other.cell == points[i].cell && other.seed != points[i].seed && !has_col_seed)
      seed_col = true;
  }
}

// The cells of a study: cell key (variant + axis values) -> samples, in first-seen order.
struct Cells {
  std::vector<std::pair<std::string, nlohmann::ordered_json>> keys;
  std::map<std::string, std::vector<stats::Sample>> samples;
  std::map<std::string, nlohmann::ordered_json> incomplete;  // points without a metric (terminal failure)
  std::map<std::string, std::size_t> variant;                // cell key -> index of its study variant
  std::map<std::string, nlohmann::ordered_json> protocols;   // cell key -> {policy: protocol} (a protocol column)
  std::map<std::string, nlohmann::ordered_json> per_seed;    // cell key -> {column: [{policy, seed, value}]}
  nlohmann::ordered_json estimates = nlohmann::ordered_json::array();  // link runs' channel estimates
};

// A link run's channel estimates and delivery checks for summary.json.
nlohmann::ordered_json channel_estimate(const Study& st, const Point& pt, const nlohmann::json& j) {
  const auto& ch = j.at("channel");
  nlohmann::ordered_json e;
  if (st.declared_variants) e["variant"] = pt.variant;
  e["policy"] = pt.policy;
  e["seed"] = pt.seed;
  e["steps"] = ch.at("steps");
  e["p_good_to_bad_estimate"] = ch.at("p_good_to_bad_estimate");
  e["p_bad_to_good_estimate"] = ch.at("p_bad_to_good_estimate");
  e["order_violations"] = j.at("sink").at("order_violations");
  e["missing"] = j.at("sink").at("missing");
  return e;
}

// Point `pt`'s sample into its cell: one cell per study variant (declared x
// grid) and value of the axis columns, so a grid key that is not a column
// still separates cells.
void add_to_cell(const Study& st, const Point& pt, const nlohmann::json& j, const std::vector<std::string>& axes,
                 const std::set<std::string>& per_seed, Cells& cells) {
  const auto& row = j.at("row");
  nlohmann::ordered_json key;
  if (!pt.variant.empty()) key["variant"] = pt.variant;
  for (const auto& a : axes) key[a] = row.at(a);
  const std::string k = std::to_string(pt.cell) + report::json_text(key);
  if (!cells.samples.count(k)) cells.keys.emplace_back(k, key);
  cells.variant[k] = pt.cell;
  if (std::find(st.columns.begin(), st.columns.end(), "protocol") != st.columns.end() && row.contains("protocol"))
    cells.protocols[k][pt.policy] = row.at("protocol");
  for (const auto& c : per_seed)  // in column-name order: the key's order does not depend on the points'
    cells.per_seed[k][c].push_back({{"policy", pt.policy}, {"seed", pt.seed}, {"value", row.at(c)}});
  stats::Sample s{pt.policy, pt.seed, {}};
  bool complete = true;
  for (const auto& m : variant_metrics(st, st.variants[pt.cell])) {
    if (row.at(m).is_null())
      complete = false;
    else
      s.metrics[m] = row.at(m).get<double>();
  }
  if (complete) {
    cells.samples[k].push_back(s);
  } else {
    cells.incomplete[k].push_back({{"policy", pt.policy}, {"seed", pt.seed}, {"status", j.value("status", "")}});
    if (!cells.samples.count(k)) cells.samples[k] = {};
  }
  if (j.contains("channel")) cells.estimates.push_back(channel_estimate(st, pt, j));
}

// results.csv (one row per point, columns from result.json "row") and the cells.
std::string results_csv(const Study& st, const std::vector<Point>& points, const std::vector<nlohmann::json>& results,
                         Cells& cells) {
  const std::vector<std::string> every = all_metrics(st);
  std::vector<std::string> axes;
  for (const auto& c : st.columns)
    if (c != "policy" && c != "protocol" && c != "seed" && c != "variant" && c != "correct" &&
        std::find(every.begin(), every.end(), c) == every.end())
      axes.push_back(c);  // protocol: the policy's stand-in (ualink-<policy>), not an axis
  bool variant_col = false, seed_col = false;
  std::set<std::string> per_seed;
  leading_columns(st, points, results, variant_col, seed_col, per_seed);
  axes.erase(std::remove_if(axes.begin(), axes.end(), [&](const std::string& a) { return per_seed.count(a) != 0; }),
             axes.end());
  std::ostringstream csv;
  if (variant_col) csv << "variant,";
  if (seed_col) csv << "seed,";
  for (std::size_t i = 0; i < st.columns.size(); ++i) csv << (i ? "," : "") << st.columns[i];
  csv << "\n";
  for (std::size_t pi = 0; pi < points.size(); ++pi) {
    const Point& pt = points[pi];
    const auto& row = results[pi].at("row");
    if (variant_col) csv << cell_text(nlohmann::json(pt.variant)) << ",";
    if (seed_col) csv << pt.seed << ",";
    for (std::size_t i = 0; i < st.columns.size(); ++i) {
      const auto& c = st.columns[i];
      csv << (i ? "," : "")
          << (c == "variant" ? pt_variant_text(pt) : row.contains(c) ? cell_text(row.at(c)) : std::string());
    }
    csv << "\n";
    add_to_cell(st, pt, results[pi], axes, per_seed, cells);
  }
  return csv.str();
}

// One cell's statistics into `into`. Pair by seed: a seed enters a cell's
// statistics only if every policy has a complete point for it (a terminal
// failure leaves no completion time).
void summarize_cell(const Study& st, Cells& cells, const std::string& k, nlohmann::ordered_json& into) {
  const StudyVariant& variant = st.variants[cells.variant[k]];
  const auto& policies = variant_policies(st, variant);
  const auto& metrics = variant_metrics(st, variant);
  if (!variant.metrics.empty()) into["metrics"] = metrics;
  if (cells.protocols.count(k)) into["protocol_of_group"] = cells.protocols[k];
  if (cells.per_seed.count(k)) into["per_seed"] = cells.per_seed[k];
  std::map<std::uint64_t, std::size_t> count;
  for (const auto& smp : cells.samples[k]) ++count[smp.seed];
  std::vector<stats::Sample> paired;
  nlohmann::ordered_json dropped = nlohmann::ordered_json::array();
  for (const auto& smp : cells.samples[k]) {
    if (count[smp.seed] == policies.size())
      paired.push_back(smp);
    else
      dropped.push_back({{"policy", smp.group}, {"seed", smp.seed}});
  }
  if (cells.incomplete.count(k)) {
    into["incomplete_points"] = cells.incomplete[k];
    into["unpaired_points_dropped"] = dropped;
  }
  if (paired.empty()) {
    into["groups"] = nullptr;
    into["paired_deltas"] = nullptr;
    return;
  }
  auto s = stats::summarize(paired, metrics, policies);
  into["groups"] = s["groups"];
  into["paired_deltas"] = s["paired_deltas"];
}

// summary.json: the study, its points, and per cell the groups' statistics and paired deltas.
nlohmann::ordered_json summary_json(const Study& st, const std::vector<Point>& points, Cells& cells) {
  nlohmann::ordered_json summary;
  summary["study"] = st.name;
  summary["fabric"] = st.fabric;
  summary["points"] = points.size();
  summary["metrics"] = all_metrics(st);
  summary["ci"] = "per-group means: Student t 95 %; paired deltas (a - b, paired by seed): normal approximation 95 %";
  if (cells.keys.size() == 1 && st.variants.size() == 1 && st.variants[0].name.empty()) {
    summarize_cell(st, cells, cells.keys.front().first, summary);
  } else {
    summary["cells"] = nlohmann::ordered_json::array();
    for (const auto& [k, key] : cells.keys) {
      nlohmann::ordered_json cj = key;
      summarize_cell(st, cells, k, cj);
      summary["cells"].push_back(cj);
    }
  }
  if (!cells.estimates.empty()) summary["channel_estimates"] = cells.estimates;
  return summary;
}

// Collect: one CSV row per point, columns from result.json "row"; write
// results.csv and summary.json.
int collect_tables(const Study& st, const std::vector<Point>& points, const fs::path& out) {
  std::vector<nlohmann::json> results;
  if (const int rc = read_results(st, points, results)) return rc;
  warn_policies_without_effect(st, points, results);
  Cells cells;
  const std::string csv = results_csv(st, points, results, cells);
  const nlohmann::ordered_json summary = summary_json(st, points, cells);
  try {
    write_atomic(out / "results.csv", csv);
    write_atomic(out / "summary.json", report::json_text(summary, 2) + "\n");
  } catch (const std::exception& e) {
    // A full disk or a folder removed under the sweep: neither table stays
    // (one without the other would pass for a result); the points are kept.
    std::error_code ec;
    for (const char* t : {"results.csv", "summary.json", "results.csv.tmp", "summary.json.tmp"})
      fs::remove(out / t, ec);
    std::cerr << fmt::format(
        "error: the points finished but the tables could not be written: {}; neither "
        "results.csv nor summary.json is left (the points are kept: `--collect` writes them)\n",
        e.what());
    return 3;
  }
  return 0;
}

}  // namespace

}  // namespace fabricsim::sim
