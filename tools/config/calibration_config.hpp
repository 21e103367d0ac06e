// Reads calibration tables (configs/calibration/*.json, schema "hopsim.calibration/1").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tools/config/node.hpp"
#include "topology/spec.hpp"
#include "workloads/compute/calibration.hpp"
#include "workloads/compute/calibration_check.hpp"

namespace hopsim::config {

/// Parses and checks a whole calibration file: the schema string, unknown keys, each op's key
/// and axes (names in order, values positive and strictly ascending), one time per grid cell
/// (positive or null), the FLOP formula of the op and pass, a citation on every table of a
/// published file, no two tables with the same op, pass, impl and key.
/// Throws ConfigError naming the file and JSON pointer of the first bad value.
work::Calibration parse_calibration(const Node& root);

/// None when the table fits `gpu_name` (calibration_fits); else the scaling of its times to that
/// GPU by its datasheet figures. Throws ConfigError "SUBJECT is for ..." when it has none.
std::optional<work::TableScaling> scaling_to(const work::Calibration& calibration,
                                             const std::string& gpu_name,
                                             const std::string& subject);

/// Appends the tables of `calibration.base`, a shipped calibration preset, to its own with
/// tier 1 (and those of the base's own base with tier 2, and so on): held plausible against the
/// base's own datasheet figures, and scaled from the base's GPU (TableScaling) unless that GPU
/// fits `gpu_name` (empty: no cluster, no scaling). Does nothing without a base. Returns what
/// was attached, one line for the report (empty: no base). Throws ConfigError naming `file` and
/// /base when the base is not a shipped table, the chain of bases leads back to itself or is
/// longer than 4, a base lacks the datasheet figures it must be scaled by, or is implausible.
std::string attach_base(work::Calibration& calibration, const std::string& file,
                        const std::string& gpu_name);

/// Whether the table's device name contains the model of the cluster's GPU (the first word of
/// `gpu_name`, "H100" of "H100 SXM") as a word, case-insensitively, or lists it among its
/// equivalent GPUs.
bool calibration_fits(const work::Calibration& calibration, const std::string& gpu_name);

/// Whether the table's device name itself contains the model (not only its equivalent GPUs).
bool calibration_names_gpu(const work::Calibration& calibration, const std::string& gpu_name);

/// Throws ConfigError unless calibration_fits. `file` is the calibration file, for the
/// message.
void check_calibration_for(const work::Calibration& calibration, const std::string& gpu_name,
                           const std::string& file);

/// Throws ConfigError naming `file` and the cell or device key when the table is implausible
/// for `gpu` (work::check_plausible: a cell faster than the peak or slower than any working
/// kernel, a device block that contradicts the GPU); returns the warnings ("file: /pointer:
/// message"), such as times that fall as a shape grows. With `gpu_node`, the cluster's gpu
/// object that `gpu` was read from: when a --set wrote the figure the cell contradicts, the
/// error names that --set first ("--set cluster.gpu.hbm_GBps=1: the GPU's hbm_GBps makes ...").
std::vector<std::string> check_calibration_plausible(const work::Calibration& calibration,
                                                     const work::GpuFigures& gpu,
                                                     const std::string& file,
                                                     const Node* gpu_node = nullptr);

/// Where the table fits `gpu` only through equivalent_gpus: throws ConfigError at
/// /device/equivalent_gpus/N unless its device block gives sm_count and peak_bf16_tflops and
/// they (and peak_fp8_tflops, where given) are the GPU's, the peaks within kPeakMargin.
void check_equivalence(const work::Calibration& calibration, const topo::GpuSpec& gpu,
                       const std::string& file);

/// The one check of a table for a cluster's GPU, which `run`, `explain` and `check-calibration`
/// (`--gpu`, `--cluster`) make: check_calibration_for, check_equivalence, then
/// check_calibration_plausible against the GPU's figures. Returns the warnings.
std::vector<std::string> check_calibration_on(const work::Calibration& calibration,
                                              const topo::GpuSpec& gpu, const std::string& file,
                                              const Node* gpu_node = nullptr);

/// The figures of a cluster's GPU, for check_calibration_plausible.
work::GpuFigures figures_of(const topo::GpuSpec& gpu);

/// A table's own device block as figures: its measured ceilings, lower bounds of the peaks.
work::GpuFigures figures_of(const work::Calibration& calibration);

/// A table's own GPU by its datasheet figures (device peaks and HBM, where the file gives
/// them): what a table scaled to another GPU is held plausible against.
work::GpuFigures datasheet_figures_of(const work::Calibration& calibration);

}  // namespace hopsim::config
