// options.h: the options a config names with a string (model.type and the model's layer options,
// data.dataset, data.tokenizer, optim.name, optim.decay, schedule.name, train.rng,
// precision.dtype), each with one table of
// names beside the enum it stands for (autograd/names.h's Named, as the model's layer options and
// the attention kernels have).
// The config holds the enums: reading a config turns each name into its value (an unknown name is
// an error naming the key and the valid names), writing one turns it back, so run folders keep
// the names and nothing past the config compares a string. Adding an optimizer is its class, one
// entry here and its case in make_optimizer (train.cpp); adding a dataset is its loader, one entry
// here and its case in load_lm_data (lm_data.cpp).
#pragma once
#include <array>

#include "autograd/cpu/lowp.h"
#include "autograd/names.h"
#include "autograd/ops_attention.h"
#include "data/seq2seq_tasks.h"
#include "data/text_dataset.h"
#include "nn/blocks.h"
#include "nn/init.h"
#include "nn/layers.h"
#include "nn/positional.h"
#include "optim/schedule.h"

namespace sf {

// model.type: decoder-only language model or encoder-decoder.
enum class ModelType { gpt, transformer };
inline constexpr std::array<Named<ModelType>, 2> kModelTypeNames = {
    {{"gpt", ModelType::gpt}, {"transformer", ModelType::transformer}}};

// data.dataset: language-modelling corpora, then the seq2seq tasks (seq2seq_task_of).
enum class Dataset { synthetic, text, shakespeare, tang, song, copy, reverse, sort, addition };
inline constexpr std::array<Named<Dataset>, 9> kDatasetNames = {{{"synthetic", Dataset::synthetic},
                                                                 {"text", Dataset::text},
                                                                 {"shakespeare", Dataset::shakespeare},
                                                                 {"tang", Dataset::tang},
                                                                 {"song", Dataset::song},
                                                                 {"copy", Dataset::copy},
                                                                 {"reverse", Dataset::reverse},
                                                                 {"sort", Dataset::sort},
                                                                 {"addition", Dataset::addition}}};

// data.tokenizer: for the text datasets.
inline constexpr std::array<Named<data::TokenizerKind>, 2> kTokenizerNames = {
    {{"char", data::TokenizerKind::chars}, {"bpe", data::TokenizerKind::bpe}}};

enum class OptimizerKind { adamw, adam, sgd };
inline constexpr std::array<Named<OptimizerKind>, 3> kOptimizerNames = {
    {{"adamw", OptimizerKind::adamw}, {"adam", OptimizerKind::adam}, {"sgd", OptimizerKind::sgd}}};

// Which parameters weight decay applies to (optim.decay).
enum class DecaySet { matrices, all_matrices, all };
inline constexpr std::array<Named<DecaySet>, 3> kDecayNames = {
    {{"matrices", DecaySet::matrices}, {"all_matrices", DecaySet::all_matrices}, {"all", DecaySet::all}}};

// schedule.name: the learning rate over time (optim/schedule.h).
inline constexpr std::array<Named<ScheduleKind>, 4> kScheduleNames = {{{"constant", ScheduleKind::constant},
                                                                       {"cosine", ScheduleKind::cosine},
                                                                       {"linear", ScheduleKind::linear},
                                                                       {"noam", ScheduleKind::noam}}};

// train.rng: our generator, or PyTorch's CPU generator shared as nanoGPT shares it.
enum class RngKind { xoshiro, torch };
inline constexpr std::array<Named<RngKind>, 2> kRngNames = {{{"xoshiro", RngKind::xoshiro}, {"torch", RngKind::torch}}};

// precision.dtype: the emulated compute precision.
inline constexpr std::array<Named<Precision>, 3> kPrecisionNames = {
    {{"fp32", Precision::fp32}, {"fp16", Precision::fp16}, {"bf16", Precision::bf16}}};

// Each option's table, found from its type: config.cpp reads, writes and documents every enum
// field through these.
inline constexpr const auto& names_table(ModelType) { return kModelTypeNames; }
inline constexpr const auto& names_table(Dataset) { return kDatasetNames; }
inline constexpr const auto& names_table(data::TokenizerKind) { return kTokenizerNames; }
inline constexpr const auto& names_table(OptimizerKind) { return kOptimizerNames; }
inline constexpr const auto& names_table(DecaySet) { return kDecayNames; }
inline constexpr const auto& names_table(ScheduleKind) { return kScheduleNames; }
inline constexpr const auto& names_table(RngKind) { return kRngNames; }
inline constexpr const auto& names_table(Precision) { return kPrecisionNames; }
inline constexpr const auto& names_table(Activation) { return kActivations; }  // nn's own tables
inline constexpr const auto& names_table(PosEncoding) { return kPosEncodings; }
inline constexpr const auto& names_table(NormPlacement) { return kNorms; }
inline constexpr const auto& names_table(InitScheme) { return kInits; }
inline constexpr const auto& names_table(AttentionKernel) { return kAttentionKernels; }  // autograd's

// An option's name as the config writes it: option_name(Dataset::shakespeare) is "shakespeare".
template <class E>
const char* option_name(E value) {
  return name_of(names_table(value), value);
}

}  // namespace sf
