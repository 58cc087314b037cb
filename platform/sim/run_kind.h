#pragma once
// The kinds of run a fabric file can ask for (`fabric.kind`), one descriptor
// each: what `check` reports, whether the run has a link policy, which
// columns a sweep may read from its result.json. The command line, `check`,
// `bench` and the sweep ask the descriptor instead of comparing kind strings.
#include <memory>
#include <string>
#include <vector>

#include "platform/config/yaml_config.h"
#include "platform/sim/check.h"

namespace fabricsim::sim {

/// Whether result-row key `key` holds text or a flag, not a number (policy,
/// protocol, channel, wire_ber, collective, algorithm, correct, group,
/// transport, selection, picks, variant): such a column is an axis, never a
/// study metric.
bool text_row_key(const std::string& key);

/// One kind of run.
struct RunKind {
  /// The four experiment families (ring, switched-pod and explicit fabrics
  /// are one family: a UALink fabric running a collective).
  enum class Family { link_pair, ualink_fabric, pcie_host, rifl_link };
  Family family;
  /// The key `--policy` and a study's `policies:` set (e.g.
  /// "defaults.link.policy.name"); empty: this kind has no link policy.
  std::string policy_key;
  /// Why `--policy` is refused (kinds without a policy).
  std::string no_policy_reason;
  /// A study's results.csv columns when it lists none.
  std::vector<std::string> default_columns;
  /// Every key of result.json's "row" a study may name as a column.
  std::vector<std::string> row_keys;
  /// Numeric columns summarised per cell when a study lists no `metrics:`.
  std::vector<std::string> default_metrics;
  /// A study must give `seeds:` (a PCIe host cell is deterministic without one).
  bool seeds_required = true;
  /// The run moves flits through the link layer (what `fabricsim bench` counts).
  bool counts_flits = true;
  /// `check` writes a Graphviz graph of the fabric.
  bool has_graph = true;
  /// `check`: parse and validate the document as `run` would before
  /// elaborating. Throws config::ConfigError / fabric::FabricError.
  FabricCheck (*check)(std::shared_ptr<config::Document>) = nullptr;
  /// Parse the document as the run's loader does, nothing more (a sweep
  /// validates every variant with it). Throws config::ConfigError.
  void (*parse)(std::shared_ptr<config::Document>) = nullptr;
  /// Estimated CPU seconds of a run of the document (a rough figure, only
  /// for ordering a sweep's points: the most expensive start first, so that
  /// parallel jobs do not end with one long point running alone); nullptr:
  /// no estimate (the sweep keeps the study's order). Throws as parse().
  double (*cost)(std::shared_ptr<config::Document>) = nullptr;

  bool has_policy() const { return !policy_key.empty(); }
};

/// The descriptor of a `fabric.kind` value (one of fabric::fabric_kind's
/// values). Throws std::invalid_argument for any other string.
const RunKind& run_kind(const std::string& fabric_kind);

/// fabric::fabric_kind(doc) (file:line:key errors for a missing or unknown
/// kind), then its descriptor.
const RunKind& run_kind_of(const config::Document& doc);

}  // namespace fabricsim::sim
