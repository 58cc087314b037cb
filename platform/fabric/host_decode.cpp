// pcie-host configuration, the decode-round workload with transport
// selection (host-bridge.md §6, collectives.md §5-§6): the decode section and
// the ladder files it names.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "platform/config/units.h"
#include "platform/fabric/fabric_config.h"
#include "platform/fabric/host_parse.h"
#include "sw/transports.h"

namespace fabricsim::fabric {

sw::Ladder load_ladder(const std::string& path) {
  auto doc = std::make_shared<config::Document>(config::load_document(path));
  config::Section root = config::root_section(doc);
  if (!root.has("ladder") && root.has("fabric"))
    root.fail("fabric", "this file is a fabric, not a ladder (a ladder file holds `ladder:`; see topologies/ladders/)");
  if (!root.has("ladder") && root.has("study"))
    root.fail("study", "this file is a study, not a ladder (a ladder file holds `ladder:`; see topologies/ladders/)");
  if (!root.has("ladder")) root.expect_keys({"ladder"});  // a misspelt `ladder:` gets a suggestion
  config::Section l = root.child("ladder");
  sw::Ladder L;
  L.name = l.required_string("name");
  l.string("description", "");
  const auto& allreduce = sw::allreduce_transport_names();  // a ladder picks AllReduce transports, not the probes
  auto buckets = l.list("buckets", true);
  if (buckets.empty()) l.fail("buckets", "a ladder needs at least one bucket");
  for (auto& b : buckets) {
    sw::Ladder::Bucket k;
    if (!b.has("max") || !b.has("transport")) {
      b.finish();  // a misspelt key is the likelier cause: name it
      b.fail(b.has("max") ? "transport" : "max", "required key is missing");
    }
    k.max_bytes = b.bytes("max", 0);
    if (k.max_bytes == 0) b.fail("max", "a bucket's maximum must be > 0");
    k.transport = b.choice("transport", "", allreduce);
    if (!L.buckets.empty() && k.max_bytes <= L.buckets.back().max_bytes)
      b.fail("max", "bucket maxima must be strictly ascending");
    b.finish();
    L.buckets.push_back(k);
  }
  l.finish();
  root.finish();
  return L;
}

namespace host_parse {

namespace {

// decode.allreduces: sizes per GPU; in decode mode each a positive multiple of 4 x group size.
void decode_allreduces(config::Section& d, HostRunConfig& c) {
  DecodeSpec& D = c.decode;
  D.allreduces.clear();
  const std::uint64_t n = c.workload.group.size();
  for (const auto& x : d.strings("allreduces", {"80KiB"})) {
    std::uint64_t v = 0;
    try {
      v = config::parse_bytes(x);
    } catch (const std::invalid_argument& e) {
      d.fail("allreduces", e.what());
    }
    if (c.decode_mode && (v == 0 || v % (4 * n)))
      d.fail("allreduces", fmt::format("{} is not a positive multiple of 4 x group size ({} B)", x, 4 * n));
    if (v > (1ull << 30)) d.fail("allreduces", fmt::format("{}: at most 1GiB per GPU", x));
    D.allreduces.push_back(v);
  }
  if (D.allreduces.empty()) d.fail("allreduces", "a decode round needs at least one AllReduce size");
}

// decode.candidates and drop_reads_when_crossing: distinct AllReduce transports, not all dropped.
void decode_candidates(config::Section& d, HostRunConfig& c) {
  DecodeSpec& D = c.decode;
  // Default: every AllReduce transport (not the data-movement probes).
  const auto& allreduces = sw::allreduce_transport_names();
  D.candidates = d.strings("candidates", allreduces);
  std::set<std::string> seen_c;
  for (const auto& t : D.candidates) {
    if (std::find(allreduces.begin(), allreduces.end(), t) == allreduces.end())
      d.fail("candidates", fmt::format("'{}' is not an AllReduce transport", t));
    if (!seen_c.insert(t).second) d.fail("candidates", fmt::format("'{}' is listed twice", t));
  }
  if (D.candidates.empty()) d.fail("candidates", "a race needs at least one candidate");
  D.drop_reads_when_crossing = d.boolean("drop_reads_when_crossing", false);
  std::set<int> q;
  for (int g : c.workload.group) q.insert(gpu_quadrant(c.host, g));
  if (D.drop_reads_when_crossing && q.size() > 1 && sw::without_peer_reads(D.candidates).empty())
    d.fail("candidates", "every candidate reads peers, and drop_reads_when_crossing removes them all on this group");
}

// One ladder-file key of decode (`needed` by the selection `sel`); read only in
// decode mode, relative to the host file's folder `base`, and covering the
// largest AllReduce.
void decode_ladder(config::Section& d, const HostRunConfig& c, const std::filesystem::path& base,
                   const std::string& sel, const std::string& key, sw::Ladder& into, bool needed) {
  const DecodeSpec& D = c.decode;
  if (!d.has(key)) {
    if (needed) d.fail(key, fmt::format("selection '{}' needs '{}' (a ladder file)", sel, key));
    return;
  }
  const std::string f = (base / d.string(key, "")).lexically_normal().string();
  if (!c.decode_mode) return;  // only decode runs read ladders
  if (!config::is_file(f))
    d.fail(key, fmt::format("ladder file '{}' not found (paths are relative to the host file)", f));
  try {
    into = load_ladder(f);
  } catch (const config::ConfigError& e) {
    // The ladder's own file:line first; then which key named the file.
    throw config::ConfigError(fmt::format("{} (the ladder named by {})", e.what(),
                                          SourceRef{where_of(d, key), d.path() + "." + key}.prefix()));
  }
  const std::uint64_t biggest = *std::max_element(D.allreduces.begin(), D.allreduces.end());
  if (biggest > into.buckets.back().max_bytes)
    d.fail(key, fmt::format("ladder '{}' ends at {} B, below the {} B AllReduce of the decode round", into.name,
                            into.buckets.back().max_bytes, biggest));
}

}  // namespace

void decode_section(config::Section& root, HostRunConfig& c) {
  config::Section d = root.child_or_empty("decode");
  DecodeSpec& D = c.decode;
  const std::string sel = d.choice("selection", "race-median", {"ladder", "race-median", "race-mean", "fabric-class"});
  D.selection = sw::parse_selection(sel);
  decode_allreduces(d, c);
  D.layers = static_cast<std::uint32_t>(d.integer("layers", 8, 1, 1000));
  D.compute_ps = d.time_ps("compute", D.compute_ps);
  decode_candidates(d, c);
  D.race_window_ps = d.time_ps("race_window", D.race_window_ps);
  if (D.race_window_ps == 0) d.fail("race_window", "a race window must be > 0");
  D.random_start_phase = d.choice("start_phase", "random", {"random", "zero"}) == "random";
  const std::filesystem::path base = std::filesystem::path(root.file()).parent_path();
  decode_ladder(d, c, base, sel, "ladder", D.ladder, D.selection == sw::Selection::ladder);
  decode_ladder(d, c, base, sel, "switch_local_ladder", D.switch_local, D.selection == sw::Selection::fabric_class);
  decode_ladder(d, c, base, sel, "quadrant_crossing_ladder", D.quadrant_crossing,
                D.selection == sw::Selection::fabric_class);
  d.finish();
}

}  // namespace host_parse

}  // namespace fabricsim::fabric
