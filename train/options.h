// options.h: the training options a config names with a string (optim.name, optim.decay,
// precision.dtype), each with one table of names beside the enum it stands for (nn/names.h's
// Named, as the model's options have). validate_config checks names against these tables; the
// code past the config turns them into the enums with parse_named, which refuses an unknown
// name, so a name is written in one place and nothing falls back silently. Adding an optimizer
// is its class, one entry here and its case in make_optimizer (train.cpp).
#pragma once
#include <array>

#include "autograd/cpu/lowp.h"
#include "nn/names.h"

namespace sf {

enum class OptimizerKind { adamw, adam, sgd };
inline constexpr std::array<Named<OptimizerKind>, 3> kOptimizerNames = {
    {{"adamw", OptimizerKind::adamw}, {"adam", OptimizerKind::adam}, {"sgd", OptimizerKind::sgd}}};

// Which parameters weight decay applies to (optim.decay).
enum class DecaySet { matrices, all_matrices, all };
inline constexpr std::array<Named<DecaySet>, 3> kDecayNames = {
    {{"matrices", DecaySet::matrices}, {"all_matrices", DecaySet::all_matrices}, {"all", DecaySet::all}}};

// precision.dtype: the emulated compute precision.
inline constexpr std::array<Named<Precision>, 3> kPrecisionNames = {
    {{"fp32", Precision::fp32}, {"fp16", Precision::fp16}, {"bf16", Precision::bf16}}};

}  // namespace sf
