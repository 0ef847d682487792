// data.h: everything the data library offers, for code that wires datasets into training.
//
//   tokenizers   char_tokenizer.h (code points), bpe_tokenizer.h (byte-level BPE), tokenizer.h
//   LM data      lm_batches.h (LmData, RandomWindows, SequentialWindows), text_dataset.h,
//                markov_corpus.h (built-in corpus with a known entropy rate), token_cache.h
//   seq2seq      seq2seq_tasks.h (copy/reverse/sort/addition), seq2seq_batch.h (padding, masks)
//   downloads    tiny_shakespeare.h;  helpers: file_io.h, utf8.h, sha256.h
#pragma once
#include "data/bpe_tokenizer.h"
#include "data/char_tokenizer.h"
#include "data/file_io.h"
#include "data/lm_batches.h"
#include "data/markov_corpus.h"
#include "data/seq2seq_batch.h"
#include "data/seq2seq_tasks.h"
#include "data/text_dataset.h"
#include "data/tiny_shakespeare.h"
#include "data/token_cache.h"
#include "data/tokenizer.h"
