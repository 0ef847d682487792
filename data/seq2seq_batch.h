// seq2seq_batch.h: padding variable-length examples into encoder-decoder batches.
//
// For a batch of examples with sources of length s_b and targets of length u_b
// (S = max s_b, U = max u_b + 1):
//
//   src      (B, S)  source ids, then <pad>                         a b c <pad>
//   tgt_in   (B, U)  <bos> + target, then <pad>   (decoder input)   <bos> a b c <pad>
//   tgt_out  (B, U)  target + <eos>, then -100    (decoder labels)  a b c <eos> -100
//
// tgt_out[b][t] is the token the decoder must predict after reading tgt_in[b][0..t]. Padding
// positions of tgt_out hold ignore_index (-100, cross_entropy's default), so they add nothing
// to the loss.
//
// Key-padding masks are float32 Tensors of 0/1 values, 1 where the position is <pad>:
// attention must not look at those keys. They are (B, S) and (B, U); reshape to (B, 1, 1, S)
// to broadcast against (B, H, T, S) scores in masked_fill(scores, mask, -inf).
#pragma once
#include <vector>

#include "autograd/int_tensor.h"
#include "autograd/tensor.h"
#include "data/seq2seq_tasks.h"

namespace sf::data {

struct Seq2SeqBatch {
  IntTensor src;                 // (B, S)
  IntTensor tgt_in;              // (B, U)
  IntTensor tgt_out;             // (B, U)
  Tensor src_pad_mask;           // (B, S) float32, 1 = padding key
  Tensor tgt_pad_mask;           // (B, U) float32, 1 = padding key (combine with the causal mask)
  std::vector<int64_t> src_len;  // (B) real source lengths
  std::vector<int64_t> tgt_len;  // (B) real decoder lengths: target length + 1
};

// Pads `examples` (at least one) into one batch.
Seq2SeqBatch collate(const std::vector<Example>& examples, int ignore_index = -100);

// Counts rows whose predicted ids (B, U) equal tgt_out at every position that is not
// ignore_index: exact-match on a batch scored with teacher forcing (argmax of the logits).
int64_t count_exact_rows(const IntTensor& predicted, const IntTensor& tgt_out, int ignore_index = -100);

}  // namespace sf::data
