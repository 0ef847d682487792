// lm_data.h: the language-modelling corpus a config names (data.dataset), tokenized and split.
#pragma once
#include <nlohmann/json.hpp>

#include "data/lm_batches.h"
#include "train/config.h"

namespace sf {

// "synthetic": the built-in Markov corpus (no files); "text": data.path; "shakespeare": the
// downloaded Tiny Shakespeare. `tokenizer` (JSON, or null) reuses a saved vocabulary.
data::LmData load_lm_data(const Config& c, const nlohmann::json& tokenizer);

}  // namespace sf
