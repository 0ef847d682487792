// heads.h: the rules on an attention layer's heads, written once. The modules (attention.cpp,
// blocks.cpp) and the config's checks (train/config.cpp) all call head_rule_error.
#pragma once
#include <cstdint>
#include <string>

namespace sf {

// The width is positive, n_head >= 1 divides it, n_kv_head is 0 or a divisor of n_head, and RoPE
// (`rope`) gets an even head size. Returns "" when they hold, else one line naming the option
// that breaks one: "n_embd: must be divisible by n_head = 3 (...), got 100". `width` is what the
// caller calls the width ("d_model", "n_embd"); `prefix` goes before every option's name
// ("model." in a config, so that the error names the JSON key).
std::string head_rule_error(int64_t width_value, int64_t n_head, int64_t n_kv_head, bool rope, const std::string& width,
                            const std::string& prefix = "");

}  // namespace sf
