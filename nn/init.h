// init.h: initialisation schemes, chosen by name in a model config.
//
//   "gpt2"    every weight matrix and embedding ~ N(0, 0.02); the residual projections
//             (names ending in c_proj.weight) ~ N(0, 0.02 / sqrt(2 L)) so the residual stream's
//             variance does not grow with depth (GPT-2 paper, nanoGPT); biases 0, LN weights 1.
//   "xavier"  every weight matrix and embedding ~ U(-a, a), a = sqrt(6 / (fan_in + fan_out))
//             (Glorot & Bengio 2010; The Annotated Transformer); biases 0, LN weights 1.
//
// 1-D parameters named "...weight" are LayerNorm gains (set to 1); "...bias" are set to 0.
#pragma once
#include <string>

#include "nn/module.h"

namespace sf {

enum class InitScheme { gpt2, xavier };
// "gpt2" | "xavier"; anything else is a ConfigError listing the valid names.
InitScheme parse_init(const std::string& name);

// Re-initialises every parameter of `model` in place, in named_parameters() order, drawing from
// `gen`. n_layer is L in the GPT-2 residual scaling (the number of blocks in the stack).
void init_parameters(Module& model, InitScheme scheme, int64_t n_layer, Generator& gen);

}  // namespace sf
