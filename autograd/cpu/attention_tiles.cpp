// attention_tiles.cpp: the tile loops of attention with an online softmax (see attention_tiles.h
// for the algorithm). Legend: B batch, H heads, T queries, S keys, D head size; i a tile of
// query rows [r0, r1), j a tile of keys [c0, c1).
#include "autograd/cpu/attention_tiles.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/cpu/simd.h"
#include "autograd/cpu/small_gemm.h"
#include "autograd/cpu/threads.h"

namespace sf::kernels {

namespace {

int64_t query_tile_count(int64_t T) { return (T + kQueryTile - 1) / kQueryTile; }

// The keys [first, end) that some row of [r0, r1) may see: both ends of visible_keys grow with
// the row, so they are the first row's first key and the last row's end.
AttentionMask::KeyRange tile_keys(const AttentionMask& mask, int64_t r0, int64_t r1, int64_t T, int64_t S) {
  return {mask.visible_keys(r0, T, S).first, mask.visible_keys(r1 - 1, T, S).end};
}

// s (rows, cols), rows kKeyTile apart = scale Q_i K_j^T + bias for the query rows [r0, r1) and keys
// [c0, c1) of head (b, h), with every key a row may not see (mask, padding) set to -inf.
// kt is the head's K^T (D, S) when the product runs on small_gemm.
template <class Tp>
void score_tile(const TiledAttention<Tp>& a, bool small, int64_t b, int64_t h, int64_t r0, int64_t r1, int64_t c0,
                int64_t c1, const Tp* kt, Tp* s) {
  const Tp ninf = -std::numeric_limits<Tp>::infinity();
  const Tp* qi = a.q + a.lq.at(b, h) + r0 * a.lq.ld;  // (rows, D)
  const Tp* kj = a.k + a.lk.at(b, h) + c0 * a.lk.ld;  // (cols, D)
  head_gemm_bt(small, r1 - r0, c1 - c0, a.D, a.scale, qi, a.lq.ld, kj, a.lk.ld, small ? kt + c0 : nullptr, a.S, Tp(0),
               s, kKeyTile);
  const auto& bs = a.bias_strides;
  for (int64_t t = r0; t < r1; ++t) {
    Tp* row = s + (t - r0) * kKeyTile - c0;  // row[c] for c in [c0, c1)
    if (a.bias) {
      const Tp* br = a.bias + b * bs[0] + h * bs[1] + t * bs[2];
      for (int64_t c = c0; c < c1; ++c) row[c] += br[c * bs[3]];
    }
    const auto [first, end] = a.mask->visible_keys(t, a.T, a.S);  // -inf outside [first, end)
    std::fill(row + c0, row + std::clamp(first, c0, c1), ninf);
    std::fill(row + std::clamp(end, c0, c1), row + c1, ninf);
    if (a.pad)
      for (int64_t c = c0; c < c1; ++c)
        if (a.pad[b * a.S + c] != 0) row[c] = ninf;
  }
}

}  // namespace

template <class Tp>
void tiled_attention_forward(const TiledAttention<Tp>& a, Tp* out, Tp* lse) {
  const int64_t T = a.T, S = a.S, D = a.D, tiles = query_tile_count(T);
  const Tp ninf = -std::numeric_limits<Tp>::infinity();
  const bool small = use_small_gemm(D);
  parallel_for(a.B * a.H * tiles, 1, kFineChunksPerThread, [&](int64_t task0, int64_t task1) {
    std::vector<Tp> s(static_cast<size_t>(kQueryTile * kKeyTile));  // one tile of scores, then of P
    std::vector<Tp> m(kQueryTile), l(kQueryTile);                   // running max and sum per row
    std::vector<Tp> kt(small ? static_cast<size_t>(D * S) : 0);     // (D, S) = K^T of one head
    int64_t kt_head = -1;                                           // whose K^T kt holds
    for (int64_t task = task0; task < task1; ++task) {
      const int64_t bh = task / tiles, b = bh / a.H, h = bh % a.H;
      const int64_t r0 = (task % tiles) * kQueryTile, r1 = std::min(T, r0 + kQueryTile), rows = r1 - r0;
      if (small && kt_head != bh) {
        transpose_block(S, D, a.k + a.lk.at(b, h), a.lk.ld, kt.data());
        kt_head = bh;
      }
      Tp* o = out + a.lo.at(b, h) + r0 * a.lo.ld;  // O_i (rows, D), accumulated in place
      for (int64_t r = 0; r < rows; ++r) std::fill(o + r * a.lo.ld, o + r * a.lo.ld + D, Tp(0));
      std::fill(m.begin(), m.end(), ninf);
      std::fill(l.begin(), l.end(), Tp(0));
      const auto [first, end] = tile_keys(*a.mask, r0, r1, T, S);
      for (int64_t c0 = first; c0 < end; c0 += kKeyTile) {
        const int64_t c1 = std::min(end, c0 + kKeyTile), cols = c1 - c0;
        score_tile(a, small, b, h, r0, r1, c0, c1, kt.data(), s.data());  // S_ij
        for (int64_t r = 0; r < rows; ++r) {
          Tp* row = s.data() + r * kKeyTile;
          const Tp m_new = std::max(m[r], simd::row_max(row, cols));
          if (m_new == ninf) {  // no key seen yet in this row: P = 0, nothing to add
            std::fill(row, row + cols, Tp(0));
            continue;
          }
          const Tp rescale = std::exp(m[r] - m_new);                         // 0 when m was -inf (O and l are 0 then)
          l[r] = rescale * l[r] + simd::exp_shifted(row, row, cols, m_new);  // row becomes P_ij
          if (rescale != Tp(1)) simd::scale(o + r * a.lo.ld, D, rescale);
          m[r] = m_new;
        }
        head_gemm(small, false, rows, D, cols, Tp(1), s.data(), kKeyTile, a.v + a.lv.at(b, h) + c0 * a.lv.ld, a.lv.ld,
                  Tp(1), o, a.lo.ld);  // O_i += P_ij V_j
      }
      for (int64_t r = 0; r < rows; ++r) {  // normalise; a row that saw no key keeps O = 0
        Tp& row_lse = lse[bh * T + r0 + r];
        if (l[r] == Tp(0)) {
          row_lse = ninf;
          continue;
        }
        simd::scale(o + r * a.lo.ld, D, Tp(1) / l[r]);
        row_lse = m[r] + std::log(l[r]);
      }
    }
  });
}

template <class Tp>
void tiled_attention_backward(const TiledAttention<Tp>& a, const Tp* out, const Tp* lse, const Tp* dout, Tp* dq, Tp* dk,
                              Tp* dv) {
  const int64_t T = a.T, S = a.S, D = a.D, tiles = query_tile_count(T);
  const Tp ninf = -std::numeric_limits<Tp>::infinity();
  const bool small = use_small_gemm(D);
  parallel_for(a.B * a.H, 1, kFineChunksPerThread, [&](int64_t bh0, int64_t bh1) {
    std::vector<Tp> p(static_cast<size_t>(kQueryTile * kKeyTile));              // P_ij
    std::vector<Tp> ds(static_cast<size_t>(kQueryTile * kKeyTile));             // dP_ij, then dS_ij
    std::vector<Tp> delta(static_cast<size_t>(T));                              // rowsum(dO * O)
    std::vector<Tp> kt(small ? static_cast<size_t>(D * S) : 0), vt(kt.size());  // K^T, V^T (D, S)
    for (int64_t bh = bh0; bh < bh1; ++bh) {
      const int64_t b = bh / a.H, h = bh % a.H;
      const Tp *qh = a.q + a.lq.at(b, h), *kh = a.k + a.lk.at(b, h), *vh = a.v + a.lv.at(b, h);
      const Tp *oh = out + a.lo.at(b, h), *goh = dout + a.lo.at(b, h), *lse_h = lse + bh * T;
      Tp *dqh = dq + a.lq.at(b, h), *dkh = dk + a.lk.at(b, h), *dvh = dv + a.lv.at(b, h);
      for (int64_t t = 0; t < T; ++t) {
        std::fill(dqh + t * a.lq.ld, dqh + t * a.lq.ld + D, Tp(0));
        delta[t] = simd::dot(goh + t * a.lo.ld, oh + t * a.lo.ld, D);
      }
      for (int64_t c = 0; c < S; ++c) {
        std::fill(dkh + c * a.lk.ld, dkh + c * a.lk.ld + D, Tp(0));
        std::fill(dvh + c * a.lv.ld, dvh + c * a.lv.ld + D, Tp(0));
      }
      if (small) {
        transpose_block(S, D, kh, a.lk.ld, kt.data());
        transpose_block(S, D, vh, a.lv.ld, vt.data());
      }
      for (int64_t c0 = 0; c0 < S; c0 += kKeyTile) {  // key tiles outside: dK_j and dV_j stay hot
        const int64_t c1 = std::min(S, c0 + kKeyTile), cols = c1 - c0;
        for (int64_t i = 0; i < tiles; ++i) {
          const int64_t r0 = i * kQueryTile, r1 = std::min(T, r0 + kQueryTile), rows = r1 - r0;
          const auto [first, end] = tile_keys(*a.mask, r0, r1, T, S);
          if (c0 >= end || c1 <= first) continue;                           // no row of this tile sees these keys
          score_tile(a, small, b, h, r0, r1, c0, c1, kt.data(), p.data());  // S_ij
          for (int64_t r = 0; r < rows; ++r) {                              // P_ij = exp(S_ij - LSE_i)
            Tp* row = p.data() + r * kKeyTile;
            if (lse_h[r0 + r] == ninf) std::fill(row, row + cols, Tp(0));  // the row saw no key
            else simd::exp_shifted(row, row, cols, lse_h[r0 + r]);
          }
          const Tp* goi = goh + r0 * a.lo.ld;  // dO_i (rows, D)
          head_gemm(small, true, cols, D, rows, Tp(1), p.data(), kKeyTile, goi, a.lo.ld, Tp(1), dvh + c0 * a.lv.ld,
                    a.lv.ld);  // dV_j += P_ij^T dO_i
          head_gemm_bt(small, rows, cols, D, Tp(1), goi, a.lo.ld, vh + c0 * a.lv.ld, a.lv.ld,
                       small ? vt.data() + c0 : nullptr, S, Tp(0), ds.data(), kKeyTile);  // dP_ij = dO_i V_j^T
          for (int64_t r = 0; r < rows; ++r) {  // dS_ij = P_ij * (dP_ij - Delta_i)
            Tp* dsr = ds.data() + r * kKeyTile;
            const Tp* pr = p.data() + r * kKeyTile;
            const Tp d = delta[r0 + r];
            simd::map2(pr, dsr, dsr, cols, [d](auto p_, auto dp) { return p_ * (dp - d); });
          }
          head_gemm(small, false, rows, D, cols, a.scale, ds.data(), kKeyTile, kh + c0 * a.lk.ld, a.lk.ld, Tp(1),
                    dqh + r0 * a.lq.ld, a.lq.ld);  // dQ_i += scale dS_ij K_j
          head_gemm(small, true, cols, D, rows, a.scale, ds.data(), kKeyTile, qh + r0 * a.lq.ld, a.lq.ld, Tp(1),
                    dkh + c0 * a.lk.ld, a.lk.ld);  // dK_j += scale dS_ij^T Q_i
        }
      }
    }
  });
}

#define SF_TILED_ATTENTION(Tp)                                                    \
  template void tiled_attention_forward<Tp>(const TiledAttention<Tp>&, Tp*, Tp*); \
  template void tiled_attention_backward<Tp>(const TiledAttention<Tp>&, const Tp*, const Tp*, const Tp*, Tp*, Tp*, Tp*);
SF_TILED_ATTENTION(float)
SF_TILED_ATTENTION(double)
#undef SF_TILED_ATTENTION

}  // namespace sf::kernels
