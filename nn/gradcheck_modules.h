// gradcheck_modules.h: float64 finite-difference checks of every nn module and of small whole
// models (GPT and Transformer, Pre-LN and Post-LN, each positional encoding, each mask).
// The tests run one doctest case per entry; `scratchformer gradcheck` lists and runs them too.
#pragma once
#include <vector>

#include "autograd/gradcheck.h"

namespace sf {

// Groups: "nn.layers", "nn.attention", "nn.blocks", "nn.gpt", "nn.transformer".
// A module check covers its inputs and all of its parameters; whole models are tiny
// (C = 8, 2 layers, T = 4) and check their embeddings, norms, biases and first-layer weight
// matrices, so that every case runs in well under a second.
std::vector<GradcheckCase> module_gradcheck_cases();

}  // namespace sf
