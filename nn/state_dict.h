// state_dict.h: a Module's parameters by name, saved to and loaded from safetensors files.
//
// The names are the module tree's dotted paths (Module::named_parameters), which for the GPT are
// nanoGPT's state_dict names ("transformer.h.0.attn.c_attn.weight"), so a file converted from
// nanoGPT (tools/nanogpt_convert.py) loads directly.
//
// Tied weights: a tensor registered under two names (GPT's lm_head.weight and
// transformer.wte.weight) is saved once, under its first name. Loading accepts a file that holds
// it once under either name, or under both (as nanoGPT's torch state_dict does) provided both
// copies are equal.
#pragma once
#include <string>

#include "nn/module.h"
#include "nn/safetensors.h"

namespace sf {

// The module's parameters as (name, tensor) pairs, tied tensors once (the tensors themselves,
// not copies). metadata lets a caller record e.g. the model config next to the weights.
NamedTensors state_dict(const Module& module);

// Saves the parameters to `path` as safetensors (atomically), with optional string metadata.
void save_state_dict(const Module& module, const std::string& path, const Metadata& metadata = {});

// Copies named tensors into the module's parameters, in place (the parameter handles, tying and
// flat buffers are kept). Every parameter must be present with the same shape and dtype, and
// nothing else may be: otherwise one CheckpointError naming the tensor (and both shapes), with
// `source` (a file name) first. Nothing is modified unless everything matches.
void load_state_dict(Module& module, const NamedTensors& tensors, const std::string& source = "state_dict");

// Only load_state_dict's checks: throws the CheckpointError it would, copies nothing.
void check_state_dict(const Module& module, const NamedTensors& tensors, const std::string& source = "state_dict");

// Loads a safetensors file written by save_state_dict or converted from nanoGPT.
// Returns the file's metadata.
Metadata load_state_dict(Module& module, const std::string& path);

}  // namespace sf
