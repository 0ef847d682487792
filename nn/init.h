// init.h: initialisation schemes, chosen by name in a model config (InitScheme in nn's configs).
//
//   "gpt2"    every weight matrix and embedding ~ N(0, 0.02); the residual projections
//             (names ending in c_proj.weight) ~ N(0, 0.02 / sqrt(2 L)) so the residual stream's
//             variance does not grow with depth (GPT-2 paper, nanoGPT); biases 0, LN weights 1.
//   "xavier"  every weight matrix and embedding ~ U(-a, a), a = sqrt(6 / (fan_in + fan_out))
//             (Glorot & Bengio 2010; The Annotated Transformer); biases 0, LN weights 1.
//
// 1-D parameters named "...weight" are LayerNorm gains (set to 1); "...bias" are set to 0.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "autograd/names.h"
#include "autograd/torch_generator.h"
#include "nn/module.h"

namespace sf {

enum class InitScheme { gpt2, xavier };
inline constexpr std::array<Named<InitScheme>, 2> kInits = {
    {{"gpt2", InitScheme::gpt2}, {"xavier", InitScheme::xavier}}};
// The config reads model.init through kInits (train/options.h).
const char* init_name(InitScheme scheme);

// Re-initialises every parameter of `model` in place, in named_parameters() order, drawing from
// `gen`. n_layer is L in the GPT-2 residual scaling (the number of blocks in the stack).
void init_parameters(Module& model, InitScheme scheme, int64_t n_layer, Generator& gen);

// Re-initialises a GPT the way nanoGPT's model.py does after torch.manual_seed: the same draws
// from PyTorch's generator in the same order, so the weights are PyTorch's (to the last bit or
// two, see torch_generator.h). nanoGPT's GPT.__init__ draws in three passes:
//   1. building the modules: each nn.Embedding draws normal_(0, 1), each nn.Linear draws a
//      kaiming uniform_ for its weight and uniform_ for its bias (all overwritten below, but they
//      use up draws); the head nn.Linear(C, V) is built last, after ln_f;
//   2. self.apply(_init_weights): every Linear and Embedding weight ~ N(0, 0.02), in the same
//      order, biases 0; a tied head's draw is the one that stays in wte;
//   3. every c_proj.weight again ~ N(0, 0.02 / sqrt(2 n_layer)).
// LayerNorm weights are 1 and biases 0 (no draws). The model's parameters must be float32 and
// named as nanoGPT names them (GPT is); anything else is a ConfigError.
void init_parameters_like_torch(Module& gpt, int64_t n_layer, TorchGenerator& gen);

}  // namespace sf
