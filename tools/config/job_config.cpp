// The workload dispatch: kind name -> parser, in work::Job's order.
#include "tools/config/job_config.hpp"

#include <array>
#include <utility>

#include "tools/config/chakra_config.hpp"
#include "tools/config/collective_config.hpp"  // every kind's parse_job specialization
#include "tools/config/flows_config.hpp"
#include "tools/config/keys/experiment_keys.hpp"
#include "tools/config/layer_config.hpp"

namespace hopsim::config {
namespace {

using Parser = work::Job (*)(const Node&, const JobParseContext&);

template <std::size_t... I>
constexpr std::array<Parser, sizeof...(I)> make_parsers(std::index_sequence<I...> /*indices*/) {
  return {[](const Node& n, const JobParseContext& ctx) -> work::Job {
    return parse_job<std::variant_alternative_t<I, work::Job>>(n, ctx);
  }...};
}

constexpr auto kParsers = make_parsers(std::make_index_sequence<std::variant_size_v<work::Job>>());

}  // namespace

work::Job parse_workload(const Node& workload, const JobParseContext& ctx) {
  workload.expect_object();
  const std::size_t kind = workload.read(keys::workload::kKind);
  return kParsers[kind](workload, ctx);
}

}  // namespace hopsim::config
