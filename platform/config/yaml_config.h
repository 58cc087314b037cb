#pragma once
// Strict YAML access: every read names its key, every unread key is an error,
// every error names file, line, column and the full key path
// (platform.md §5: "clear errors").
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fabricsim::config {

/// A configuration error; what() is one line:
/// "FILE:LINE:COL: key 'a.b.c': MESSAGE" (or "--set a.b.c: MESSAGE" for
/// values that came from the command line).
struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A loaded YAML document plus where it came from.
struct Document {
  std::string file;
  YAML::Node root;
  /// Key paths set from the command line -> how the user wrote them
  /// ("--set a.b", "--policy"), for error messages.
  std::map<std::string, std::string> overridden;
};

/// Load a YAML file. Throws ConfigError for a missing file or a syntax error
/// (with line and column). The file is recorded in files_read().
Document load_document(const std::string& path);

/// True if `path` names a regular file (following links). Never throws: a name
/// the filesystem rejects (too long, bad characters, no permission to look)
/// is simply not a file, so callers report "not found" as a ConfigError
/// instead of letting std::filesystem::filesystem_error escape.
bool is_file(const std::string& path) noexcept;

/// Where a file named in a fabric file (workload.schedule) is looked for:
/// an absolute path as given; a relative one beside the fabric file (in
/// `fabric_dir`), else in the current folder. `path` is the regular file
/// found ("" if none: the caller reports it), `beside` the place looked at
/// first for a relative one (lexically normalised; `path` when found there),
/// `here` true if it was found in the current folder instead. Never throws.
struct LocatedFile {
  std::string path, beside;
  bool here = false;
};
LocatedFile locate_beside(const std::filesystem::path& fabric_dir, const std::string& value);

/// Every file load_document has read in this process, in first-read order:
/// (path as given, FNV-1a 64 hex of the bytes last read). A run's identity and
/// a sweep's resume rule are built on it (the fabric file and every file it
/// references, such as ladders).
const std::vector<std::pair<std::string, std::string>>& files_read();

/// The bytes of input file `path`, at most `max_bytes` (a multiple of 1 MiB):
/// a device such as /dev/zero is an error, not an endless read. Throws
/// ConfigError "PATH: cannot open file" or "PATH: more than N MiB: not a WHAT".
std::string read_input_file(const std::string& path, std::size_t max_bytes, const std::string& what);

/// Record a non-YAML input file (e.g. a collective schedule) in files_read(),
/// with the bytes that were read, so that it enters the run's identity and a
/// sweep's resume rule like the fabric file and its ladders.
void record_file_read(const std::string& path, const std::string& bytes);

/// The hash files_read() gives a file that was looked for and not found
/// (an earlier place of a search path, such as a schedule beside the fabric
/// file): if it appears later, the search finds another file.
inline constexpr const char* kAbsentFile = "absent";
/// Record `path` as looked for and absent (files_read() hash kAbsentFile),
/// unless it was read before.
void record_file_absent(const std::string& path);

/// Why a map key cannot be a key path ("a null key (~)", "an empty key",
/// "'a..b' (an empty name between dots)", "a list", "a map"); "" if it can.
std::string not_a_key_path(const YAML::Node& key);

/// Apply "key.path=value" overrides (from --set). The value is parsed as a
/// YAML scalar, list or map. A path step may address an existing list item the
/// way error messages name it: `links[0].a`, `workload.group[2]`. Throws
/// ConfigError for a malformed assignment, an empty value, a path that runs
/// through a non-map node (or indexes a non-list), or an index past the end. `label`, if not
/// empty, is how errors name these overrides (default "--set key.path").
void apply_overrides(Document& doc, const std::vector<std::string>& assignments, const std::string& label = "");

/// Whether the assignment "k=v" sets the key `target` (dotted path): k is
/// target, or a map above it whose value holds it ("run={seed: 3}" sets
/// run.seed, "run={duration: 1s}" does not).
bool assignment_sets(const std::string& assignment, const std::string& target);

/// load_document + apply_overrides, shared (Section keeps the document alive).
/// Throws ConfigError as those do.
std::shared_ptr<Document> load_with_overrides(const std::string& path, const std::vector<std::string>& assignments,
                                              const std::string& label = "");

/// The name in `names` a misspelt `word` most likely stands for: the nearest
/// by edit distance (insertions, deletions, substitutions and swaps of two
/// neighbours count one each) if that distance is at most 2 and less than
/// half the word's length, else "" (no guess). Ties go to the first listed.
std::string closest_name(const std::string& word, const std::vector<std::string>& names);

/// One map in a document, with the keys read from it tracked so that
/// finish() can reject unknown keys.
class Section {
 public:
  Section(std::shared_ptr<const Document> doc, YAML::Node node, std::string path);

  bool has(const std::string& key) const;
  /// Required / optional child map. A missing required key, or a present
  /// key that is not a map, is a ConfigError.
  Section child(const std::string& key);
  Section child_or_empty(const std::string& key);
  /// Items of a list of maps (empty if the key is absent, unless required).
  std::vector<Section> list(const std::string& key, bool required = false);
  /// A list of scalars as strings.
  std::vector<std::string> strings(const std::string& key, const std::vector<std::string>& dflt);

  /// A map of `key.path: value` entries as "key.path=value" strings (study
  /// overrides); values that are lists or maps are written in YAML flow style.
  /// `lines` (optional) receives each entry's 1-based line in the file.
  std::vector<std::string> assignments(const std::string& key, std::vector<int>* lines = nullptr,
                                       std::vector<int>* columns = nullptr);

  // Typed getters; `required_` variants throw if the key is absent.
  std::uint64_t time_ps(const std::string& key, std::uint64_t dflt);
  double rate_bps(const std::string& key, double dflt);
  std::uint64_t bytes(const std::string& key, std::uint64_t dflt);
  double fraction(const std::string& key, double dflt);     ///< "2.5%" or 0.025, in [0,1]
  double probability(const std::string& key, double dflt);  ///< plain number in [0,1]
  double number(const std::string& key, double dflt, double lo, double hi);
  std::uint64_t integer(const std::string& key, std::uint64_t dflt, std::uint64_t lo, std::uint64_t hi);
  bool boolean(const std::string& key, bool dflt);
  std::string string(const std::string& key, const std::string& dflt);
  std::string required_string(const std::string& key);
  /// A name shown in reports and used in file names (fabric.name): a string
  /// of 1 to 100 bytes with no control character; anything else is an error.
  std::string name(const std::string& key, const std::string& dflt);
  /// One of `options`; anything else is an error listing them.
  std::string choice(const std::string& key, const std::string& dflt, const std::vector<std::string>& options);

  /// Mark `key` as read (its content was consumed some other way).
  void mark_used(const std::string& key) { used_.insert(key); }

  /// Throws ConfigError naming the first key of this map that no getter read.
  void finish() const;
  /// The keys of this map that no getter has read so far, in file order
  /// (scalar keys only).
  std::vector<std::string> unused_keys() const;
  /// Throws ConfigError naming the first key of this map that is not in
  /// `known`, with the closest known one (closest_name) as a suggestion.
  /// For a map whose keys are read in an order where a misspelt key would
  /// first show as a missing required one (`sedes:` for `seeds:`): call it
  /// before reading. A key the section derives from others still needs finish().
  void expect_keys(const std::vector<std::string>& known) const;

  /// Error at `key` of this section (or at the section itself if key empty).
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  const std::string& path() const { return path_; }
  const std::string& file() const { return doc_->file; }

 private:
  YAML::Node get(const std::string& key);  // marks used; null node if absent
  // True if `key` is absent (n undefined); a key present without a value
  // (YAML null) is a ConfigError, never the default.
  bool unset(const std::string& key, const YAML::Node& n) const;
  std::string scalar(const std::string& key, const YAML::Node& n);
  std::string key_path(const std::string& key) const;

  std::shared_ptr<const Document> doc_;
  YAML::Node node_;
  std::string path_;
  std::set<std::string> used_;
};

/// finish() for the `fabric:` section of a fabric of kind `kind`: a key that
/// another fabric kind reads (e.g. `accelerators` after `--set
/// fabric.kind=link-pair` on a ring) is named as such, with the kinds that
/// read it; any other unread key is an unknown key as in finish(). Throws
/// ConfigError (file:line:col or the --set, and the key).
void finish_fabric_section(const Section& fabric, const std::string& kind);

/// Root section of a document.
Section root_section(std::shared_ptr<const Document> doc);

}  // namespace fabricsim::config
