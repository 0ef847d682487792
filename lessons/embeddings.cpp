// Lesson 4: token embeddings. Looking up rows of a table is the same as multiplying a one-hot
// matrix by it, and its gradient is a scatter-add into the rows that were used.
// Text: embeddings.md.
#include <ostream>

#include "autograd/ops.h"
#include "lessons/lesson.h"
#include "lessons/embeddings.h"

namespace sf::lessons {

EmbeddingsResult run_lesson_embeddings(std::ostream& out) {
  EmbeddingsResult r;
  const std::vector<std::string> vocab = {"<pad>", "我", "喜欢", "苹果", "你", "香蕉"};
  const int64_t V = 6, C = 4;

  heading(out, 1, "A vocabulary, a sentence, a table", "一个词表、一句话、一张嵌入表");
  // [excerpt: table]
  Generator gen(3);
  Tensor W = Tensor::randn({V, C}, gen, 1.0, DType::f64).requires_grad_();  // (V, C)
  IntTensor ids({4}, {1, 2, 3, 1});                                         // 我 喜欢 苹果 我
  // [/excerpt]
  for (int64_t v = 0; v < V; ++v) out << "  id " << v << "  " << vocab[static_cast<size_t>(v)] << "\n";
  out << tr(out, "sentence: ", "句子：") << "我 喜欢 苹果 我 -> ids [1, 2, 3, 1]\n";
  show(out, tr(out, "W (one row of C numbers per token)", "W（每个词元一行，每行 C 个数）"), W.detach());

  heading(out, 2, "The lookup: row ids[t] of W for each position t", "查表：位置 t 取 W 的第 ids[t] 行");
  // [excerpt: lookup]
  Tensor E = embedding(W, ids);  // (T, C): E[t] = W[ids[t]]
  // [/excerpt]
  show(out, "E = embedding(W, ids)", E.detach());

  heading(out, 3, "The same as a one-hot matrix times W", "等价于独热矩阵乘以 W");
  // [excerpt: onehot]
  std::vector<double> onehot(static_cast<size_t>(ids.numel() * V), 0.0);
  for (int64_t t = 0; t < ids.numel(); ++t) onehot[static_cast<size_t>(t * V + ids[t])] = 1.0;
  Tensor O = Tensor::from_vector(onehot, {ids.numel(), V}, DType::f64);  // (T, V)
  Tensor E2 = matmul(O, W);  // (T, V) @ (V, C) -> (T, C): each row of O picks one row of W
  // [/excerpt]
  show(out, "O = one_hot(ids)", O, 0);
  show(out, "O @ W", E2.detach());
  r.lookup_vs_onehot = max_abs_diff(E.to_vector(), E2.to_vector());
  out << "largest |E - O @ W| = " << fmt(r.lookup_vs_onehot, 6) << "\n";

  heading(out, 4, "The gradient is a scatter-add into the rows that were used", "梯度是散射累加：只加到用过的那些行上");
  // [excerpt: grad]
  Tensor G = Tensor::from_vector({1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0.5, 0.5, 0.5, 0.5}, {4, C},
                                 DType::f64);  // an upstream gradient dL/dE
  sum(E * G).backward();                       // dW[ids[t]] += G[t] for every position t
  // [/excerpt]
  Tensor dW_lookup = W.grad().clone();
  W.zero_grad();
  sum(E2 * G).backward();  // the one-hot path: dW = O^T G
  r.grad_lookup_vs_onehot = max_abs_diff(dW_lookup.to_vector(), W.grad().to_vector());
  show(out, "G = dL/dE", G, 1);
  show(out, "W.grad", dW_lookup, 1);
  r.grad_row_wo = slice(dW_lookup, 0, 1, 2).to_vector();
  r.grad_row_unused = slice(dW_lookup, 0, 5, 6).to_vector();
  out << tr(out,
            "row 1 (我, at positions 0 and 3) = G[0] + G[3] = ", "第 1 行（我，出现在位置 0 和 3）= G[0] + G[3] = ")
      << fmt_vec(r.grad_row_wo, 1) << "\n";
  out << tr(out, "rows 0, 4, 5 (<pad>, 你, 香蕉: not in the sentence) stay zero\n",
            "第 0、4、5 行（<pad>、你、香蕉：不在句子里）保持为零\n");
  out << tr(out, "largest |dW(lookup) - dW(one-hot: O^T G)| = ", "|dW(查表) - dW(独热：O^T G)| 的最大值 = ")
      << fmt(r.grad_lookup_vs_onehot, 6) << "\n";

  heading(out, 5, "Why frameworks look up instead of multiplying", "为什么框架用查表而不用矩阵乘法");
  const int64_t T = 1024, V2 = 50257, C2 = 768;  // GPT-2 small
  r.lookup_reads = T * C2;
  r.onehot_mults = T * V2 * C2;
  out << tr(out, "GPT-2 small, T = ", "GPT-2 small，T = ") << T << ", V = " << V2 << ", C = " << C2
      << tr(out, ":\n", "：\n") << tr(out, "  lookup copies T*C       = ", "  查表复制 T*C           = ")
      << r.lookup_reads << tr(out, " numbers\n", " 个数\n")
      << tr(out, "  one-hot matmul does T*V*C = ", "  独热矩阵乘法要做 T*V*C = ") << r.onehot_mults
      << tr(out, " multiply-adds, almost all by 0\n", " 次乘加，几乎全是乘以 0\n");
  return r;
}

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_embeddings() {
  return {"embeddings", "Token embeddings: a lookup is a one-hot matmul, its gradient a scatter-add",
          "词嵌入：查表就是独热矩阵乘法，梯度是散射累加", printing(run_lesson_embeddings)};
}

}  // namespace sf::lessons
