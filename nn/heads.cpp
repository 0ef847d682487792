// heads.cpp: head_rule_error (heads.h).
#include "nn/heads.h"

namespace sf {

std::string head_rule_error(int64_t width_value, int64_t n_head, int64_t n_kv_head, bool rope, const std::string& width,
                            const std::string& prefix) {
  const std::string W = prefix + width, H = prefix + "n_head", G = prefix + "n_kv_head";
  if (width_value <= 0) return W + ": must be >= 1, got " + std::to_string(width_value);
  if (n_head <= 0) return H + ": must be >= 1, got " + std::to_string(n_head);
  if (width_value % n_head != 0)
    return W + ": must be divisible by " + H + " = " + std::to_string(n_head) + " (each head gets " + width +
           " / n_head dimensions), got " + std::to_string(width_value);
  if (n_kv_head < 0 || (n_kv_head > 0 && n_head % n_kv_head != 0))
    return G + ": must be 0 or a divisor of " + H + " = " + std::to_string(n_head) +
           " (n_head: standard, 1: multi-query, a divisor: grouped-query), got " + std::to_string(n_kv_head);
  if (rope && (width_value / n_head) % 2 != 0)
    return prefix + "pos_encoding: \"rope\" rotates pairs of dimensions and needs an even head size (" + width +
           " / n_head), got " + std::to_string(width_value / n_head);
  return "";
}

}  // namespace sf
