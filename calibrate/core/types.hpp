// Vocabulary of the calibration harness: ops, passes, dtypes, masks and their table spellings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>

namespace hopsim::calib {

enum class Op { Gemm, GroupedGemm, Attn, Memory };
enum class Pass { Fwd, Bwd };
enum class Dtype { Bf16, Fp8 };
enum class Mask { None, CausalTopLeft, CausalBottomRight };
/// Element types the harness stores on the device (int32 ids: row ids, class ids).
enum class Elem { Bf16, Fp8E4m3, F32, I32 };

/// Which part of the grid a run measures (`--suite`).
enum class Suite { All, Gemm, Experts, Attn, Memory };

/// A categorical key value: a string ("bf16", "causal_top_left") or an integer (d_qk = 128).
using KeyValue = std::variant<std::string, std::int64_t>;
using KeyMap = std::map<std::string, KeyValue>;

/// Thrown for malformed names, CLI values and calibration tables.
class CalibError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string_view to_string(Op op);
std::string_view to_string(Pass pass);
std::string_view to_string(Dtype dtype);
std::string_view to_string(Mask mask);
std::string_view to_string(Suite suite);

/// Bytes per element: 2, 1, 4, 4.
std::size_t elem_bytes(Elem e);

/// Parsers accept exactly the spellings `to_string` produces; anything else throws CalibError.
Op parse_op(std::string_view s);
Pass parse_pass(std::string_view s);
Dtype parse_dtype(std::string_view s);
Mask parse_mask(std::string_view s);
Suite parse_suite(std::string_view s);

/// The named FLOP formula a table of this op and pass uses ("gemm_v1", "attn_bwd_v1", ...).
std::string_view flops_formula(Op op, Pass pass);

/// True when a run restricted to `suite` measures tables of `op`.
bool suite_includes(Suite suite, Op op);

/// Key lookups that throw CalibError naming the key when it is missing or of the wrong kind.
const std::string& key_string(const KeyMap& key, const std::string& name);
std::int64_t key_int(const KeyMap& key, const std::string& name);

/// "dtype=bf16 mask=causal_top_left ..." for logs and error messages.
std::string key_to_string(const KeyMap& key);

}  // namespace hopsim::calib
