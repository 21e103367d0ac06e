// Shipped GPUs by model name (shipped_gpu.hpp).
#include "tools/config/shipped_gpu.hpp"

#include <cctype>

#include "tools/config/cluster_config.hpp"
#include "tools/config/json_file.hpp"
#include "tools/config/presets.hpp"

namespace hopsim::config {
namespace {

// "H100" of "h100 SXM": the first word, upper case.
std::string model_of(const std::string& name) {
  std::string out;
  for (const char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0) {
      if (!out.empty()) {
        break;
      }
      continue;
    }
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

}  // namespace

std::optional<ShippedGpu> shipped_gpu(const std::string& name) {
  const std::string model = model_of(name);
  for (const Preset& preset : list_presets()) {
    if (preset.kind != "cluster") {
      continue;
    }
    const std::string file = display_path(preset.file);
    const nlohmann::json doc = read_json_file(preset.file.string());
    const ClusterConfig cluster = parse_cluster(Node(doc, file));
    if (!model.empty() && model_of(cluster.topology.gpu.name) == model) {
      return ShippedGpu{cluster.topology.gpu, file};
    }
  }
  return std::nullopt;
}

}  // namespace hopsim::config
