#include "sw/selection.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "sw/transports.h"

namespace fabricsim::sw {

const std::string& Ladder::pick(std::uint64_t bytes) const {
  for (const auto& b : buckets)
    if (bytes <= b.max_bytes) return b.transport;
  throw std::out_of_range("ladder '" + name + "' has no bucket for " + std::to_string(bytes) +
                          " B (last bucket ends at " +
                          (buckets.empty() ? std::string("0") : std::to_string(buckets.back().max_bytes)) + " B)");
}

void Ladder::validate() const {
  if (buckets.empty()) throw std::invalid_argument("ladder '" + name + "' has no buckets");
  const auto& names = transport_names();
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    if (i && buckets[i].max_bytes <= buckets[i - 1].max_bytes)
      throw std::invalid_argument("ladder '" + name + "': bucket maxima must be strictly ascending");
    if (std::find(names.begin(), names.end(), buckets[i].transport) == names.end())
      throw std::invalid_argument("ladder '" + name + "': unknown transport '" + buckets[i].transport + "'");
  }
}

std::size_t race_pick(const std::vector<std::vector<double>>& samples, RaceBy by) {
  std::size_t best = samples.size();
  double best_v = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (samples[i].empty()) continue;
    double v;
    if (by == RaceBy::mean) {
      v = std::accumulate(samples[i].begin(), samples[i].end(), 0.0) / static_cast<double>(samples[i].size());
    } else {
      std::vector<double> s = samples[i];
      std::sort(s.begin(), s.end());
      const std::size_t n = s.size();
      v = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    }
    if (best == samples.size() || v < best_v) best = i, best_v = v;
  }
  if (best == samples.size()) throw std::invalid_argument("race_pick: no candidate has samples");
  return best;
}

Selection parse_selection(const std::string& n) {
  if (n == "ladder") return Selection::ladder;
  if (n == "race-median") return Selection::race_median;
  if (n == "race-mean") return Selection::race_mean;
  if (n == "fabric-class") return Selection::fabric_class;
  throw std::invalid_argument("unknown selection '" + n + "' (valid: ladder, race-median, race-mean, fabric-class)");
}

std::string to_string(Selection s) {
  switch (s) {
    case Selection::ladder: return "ladder";
    case Selection::race_median: return "race-median";
    case Selection::race_mean: return "race-mean";
    case Selection::fabric_class: return "fabric-class";
  }
  return "?";
}

std::vector<std::string> without_peer_reads(const std::vector<std::string>& c) {
  std::vector<std::string> out;
  for (const auto& t : c)
    if (!transport_reads_peers(t)) out.push_back(t);
  return out;
}

}  // namespace fabricsim::sw
