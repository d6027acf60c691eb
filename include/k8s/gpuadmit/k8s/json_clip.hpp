// Deep subtrees of a cluster object cut out before parsing, so that one legal object nested deeper than the
// reader allows (a tenant's ResourceClaim whose opaque driver parameters nest 60 levels) costs only that
// subtree, never the LIST page, the watch event or the whole kind.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gpuadmit::k8s {

// `text` with every array or object that begins deeper than `max_depth` (the outermost value is depth 1,
// as JsonLimits::max_depth counts) replaced by null, and how many were replaced. Linear, iterative: any
// depth costs no stack. Text that is not JSON is passed through for the parser to refuse. When nothing is
// that deep, `text` is returned unchanged (one scan, no copy beyond the result).
struct Clipped {
  std::string text;
  std::size_t subtrees = 0;
};
[[nodiscard]] Clipped clip_deep(std::string_view text, std::size_t max_depth);

}  // namespace gpuadmit::k8s
