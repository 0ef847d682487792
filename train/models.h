// models.h: the one mapping from a config's model section to nn's model configs.
//
// The JSON names the model options ("pre", "rope", "gelu", "xavier", "tiled"); reading the config
// turns them into nn's enums (train/options.h), and every field of GPTConfig / TransformerConfig
// that the config sets is set here:
//
//   {"model": {"norm": "post", "pos_encoding": "rope"}}
//     -> GPTConfig g;  g.norm = NormPlacement::post;  g.pos_encoding = PosEncoding::rope;
#pragma once
#include <cstdint>

#include "autograd/ops_attention.h"
#include "nn/blocks.h"
#include "nn/gpt.h"
#include "nn/init.h"
#include "nn/positional.h"
#include "nn/transformer.h"
#include "train/config.h"

namespace sf {

// The GPT that c describes (model.type "gpt"), for a vocabulary of vocab_size; weights from
// train.seed.
GPTConfig gpt_config_of(const Config& c, int64_t vocab_size);
// The encoder-decoder Transformer that c describes (model.type "transformer"), with one shared
// vocabulary of vocab_size for sources and targets; weights from train.seed.
TransformerConfig transformer_config_of(const Config& c, int64_t vocab_size);

}  // namespace sf
