// seq2seq_batch.cpp: padding, decoder input/output shifting and key-padding masks.
#include "data/seq2seq_batch.h"

#include <algorithm>

#include "autograd/errors.h"

namespace sf::data {

Seq2SeqBatch collate(const std::vector<Example>& examples, int ignore_index) {
  if (examples.empty()) throw ShapeError("collate: empty batch");
  const int64_t B = static_cast<int64_t>(examples.size());
  int64_t S = 1, U = 1;
  for (const Example& e : examples) {
    S = std::max<int64_t>(S, static_cast<int64_t>(e.src.size()));
    U = std::max<int64_t>(U, static_cast<int64_t>(e.tgt.size()) + 1);
  }
  Seq2SeqBatch b;
  b.src = IntTensor({B, S}, std::vector<int32_t>(static_cast<size_t>(B * S), kPad));
  b.tgt_in = IntTensor({B, U}, std::vector<int32_t>(static_cast<size_t>(B * U), kPad));
  b.tgt_out = IntTensor({B, U}, std::vector<int32_t>(static_cast<size_t>(B * U), ignore_index));
  b.src_pad_mask = Tensor::ones({B, S});
  b.tgt_pad_mask = Tensor::ones({B, U});
  float* src_mask = b.src_pad_mask.data<float>();
  float* tgt_mask = b.tgt_pad_mask.data<float>();
  for (int64_t r = 0; r < B; ++r) {
    const Example& e = examples[static_cast<size_t>(r)];
    const int64_t s = static_cast<int64_t>(e.src.size()), u = static_cast<int64_t>(e.tgt.size());
    for (int64_t t = 0; t < s; ++t) {
      b.src[r * S + t] = e.src[static_cast<size_t>(t)];
      src_mask[r * S + t] = 0.0f;
    }
    b.tgt_in[r * U] = kBos;  // <bos> t0 t1 ...
    for (int64_t t = 0; t < u; ++t) {
      b.tgt_in[r * U + t + 1] = e.tgt[static_cast<size_t>(t)];
      b.tgt_out[r * U + t] = e.tgt[static_cast<size_t>(t)];  // t0 t1 ... <eos>
    }
    b.tgt_out[r * U + u] = kEos;
    for (int64_t t = 0; t <= u; ++t) tgt_mask[r * U + t] = 0.0f;
    b.src_len.push_back(s);
    b.tgt_len.push_back(u + 1);
  }
  return b;
}

int64_t count_exact_rows(const IntTensor& predicted, const IntTensor& tgt_out, int ignore_index) {
  if (predicted.shape != tgt_out.shape || predicted.shape.size() != 2)
    throw ShapeError("count_exact_rows: predicted and tgt_out must both be (B, U)");
  const int64_t B = tgt_out.shape[0], U = tgt_out.shape[1];
  int64_t correct = 0;
  for (int64_t r = 0; r < B; ++r) {
    bool ok = true;
    for (int64_t t = 0; t < U && ok; ++t)
      if (tgt_out[r * U + t] != ignore_index && predicted[r * U + t] != tgt_out[r * U + t]) ok = false;
    correct += ok;
  }
  return correct;
}

}  // namespace sf::data
