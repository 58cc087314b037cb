// pcie-host configuration: the entry point parse_host, which reads the
// file's sections in order (readers in host_hardware.cpp, host_workload.cpp,
// host_decode.cpp), and the host's tree for the PCIe engine. Output
// (result.json echo, check text, DOT) is in host_report.cpp.
#include "platform/fabric/host_config.h"

#include <fmt/format.h>

#include <algorithm>

#include "platform/fabric/host_parse.h"

namespace fabricsim::fabric {

double pcie_raw_Bps(std::uint32_t gen, std::uint32_t lanes) {
  // GT/s per lane and line coding by generation (PCIe base spec): Gen1/2 8b/10b, Gen3-5 128b/130b.
  static const double gts[] = {0, 2.5, 5, 8, 16, 32};
  const double coding = gen <= 2 ? 8.0 / 10.0 : 128.0 / 130.0;
  return gts[gen] * 1e9 * lanes * coding / 8.0;
}

int gpu_quadrant(const HostSpec& h, int id) { return h.bridges[h.partitions[h.gpus.at(id).partition].bridge].quadrant; }

namespace {

// ps per payload byte of a PCIe link: raw rate less TLP header/framing overhead per max payload.
double pcie_ps_per_byte(const HostSpec& h, std::uint32_t gen, std::uint32_t lanes) {
  const double eff = static_cast<double>(h.max_payload) / static_cast<double>(h.max_payload + h.tlp_overhead);
  return 1e12 / (pcie_raw_Bps(gen, lanes) * eff);
}
double ps_per_byte(double Bps) { return Bps > 0 ? 1e12 / Bps : 0.0; }

}  // namespace

std::vector<pcie::PcieNode> host_tree(const HostSpec& h, const std::vector<int>& group) {
  using K = pcie::PcieNode::Kind;
  std::vector<pcie::PcieNode> n;
  n.push_back({"data_fabric", K::data_fabric, -1, -1, -1, 0, 0, 0, 0});
  const double x16 = pcie_ps_per_byte(h, h.gen, h.lanes);
  const double nbio = ps_per_byte(h.nbio_port_Bps), df = ps_per_byte(h.data_fabric_port_Bps);
  std::vector<int> qnode(h.quadrants), bnode(h.bridges.size()), pnode(h.partitions.size());
  for (int q = 0; q < h.quadrants; ++q) {
    qnode[q] = static_cast<int>(n.size());
    n.push_back({fmt::format("quadrant{}", q), K::quadrant, 0, -1, q, df, df, h.data_fabric_ps, h.quadrant_ps});
  }
  for (std::size_t b = 0; b < h.bridges.size(); ++b) {
    bnode[b] = static_cast<int>(n.size());
    const int q = h.bridges[b].quadrant;
    n.push_back(
        {"hb" + h.bridges[b].bus, K::host_bridge, qnode[q], -1, q, nbio, nbio, h.quadrant_ps, h.host_bridge_ps});
  }
  for (std::size_t p = 0; p < h.partitions.size(); ++p) {
    pnode[p] = static_cast<int>(n.size());
    const int b = h.partitions[p].bridge;
    std::string name = h.partitions[p].name;
    std::replace(name.begin(), name.end(), '.', '_');  // SystemC names allow no '.'
    n.push_back({name, K::partition, bnode[b], -1, h.bridges[b].quadrant, x16, x16, h.host_bridge_ps, h.switch_ps});
  }
  for (std::size_t r = 0; r < group.size(); ++r) {
    const auto& g = h.gpus.at(group[r]);
    const double link = pcie_ps_per_byte(h, g.gen, g.lanes);
    n.push_back({fmt::format("gpu{}", group[r]), K::endpoint, pnode[g.partition], static_cast<int>(r),
                 gpu_quadrant(h, group[r]), link, link, h.switch_ps, 0});
  }
  const double mem = ps_per_byte(h.host_memory_Bps);
  n.push_back({"host_memory", K::endpoint, 0, static_cast<int>(group.size()), -1, mem, mem, h.data_fabric_ps,
               h.host_memory_ps});
  return n;
}

HostRunConfig parse_host(config::Section root) {
  // Section order matters: it decides which error a file with several is reported with.
  HostRunConfig c;
  c.host.file = root.file();
  const config::Section host_memory = host_parse::fabric_section(root, c.host);
  host_parse::gpu_section(root, c.host);
  host_parse::mechanisms_section(root, c.host);
  host_parse::engine_section(root, c.host);
  const config::Section workload = host_parse::workload_section(root, c);
  host_parse::decode_section(root, c);
  host_parse::check_memory_fit(c, host_memory, workload);
  host_parse::run_section(root, c);
  root.finish();
  return c;
}

}  // namespace fabricsim::fabric
