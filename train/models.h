// models.h: the one mapping from a config's model section to nn's model configs.
//
// The JSON keeps the model options as names ("pre", "rope", "gelu", "xavier", "tiled"), which
// validate_config checks against nn's name tables; here they become nn's enums, once, and every
// field of GPTConfig / TransformerConfig that the config sets is set here:
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

// The model options of a config as nn's enums. validate_config has checked the names; one outside
// nn's tables is a ConfigError listing the valid ones ("norm: unknown 'x' (valid: pre, post)").
struct ModelOptions {
  PosEncoding pos_encoding;
  NormPlacement norm;
  Activation activation;
  InitScheme init;
  AttentionKernel attention;
};
ModelOptions model_options(const ModelConfig& m);

// The GPT that c describes (model.type "gpt"), for a vocabulary of vocab_size; weights from
// train.seed.
GPTConfig gpt_config_of(const Config& c, int64_t vocab_size);
// The encoder-decoder Transformer that c describes (model.type "transformer"), with one shared
// vocabulary of vocab_size for sources and targets; weights from train.seed.
TransformerConfig transformer_config_of(const Config& c, int64_t vocab_size);

}  // namespace sf
