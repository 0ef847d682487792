# mutants.cmake: each solution with one plausible mistake, the kind a learner makes (a missing
# max subtraction, an assignment where gradients must add up, a mask that forgets the cache
# offset, dloss ignored, 1e-5 typed instead of eps, a float64 tensor in a float32 model, an
# out-of-range target let through, ...). Each sf_mutant() line is one mistake: one text
# replacement in a copy of the solution, linked with the real checks and the other solutions
# into its own small program; its test (exercise_mutant_<file>_<k>) passes only when the checks
# find the mistake, so a check that cannot fail shows up as a surviving mutant. Configuring
# fails when the text to replace is no longer in the solution.
set(SF_MUTANT_DIR ${CMAKE_CURRENT_BINARY_DIR}/mutants)

# The driver, compiled once: runs the checks of the exercise named on its command line.
add_library(sf_exercise_mutant_main OBJECT ${CMAKE_CURRENT_LIST_DIR}/mutant_main.cpp)
target_link_libraries(sf_exercise_mutant_main PRIVATE sf_options sf_exercise_checks)

# An optional fourth argument is the diagnosis the FAIL line must name (a piece of its text), so
# that a checker which stops recognising the mistake fails the test.
function(sf_mutant stem from to)
  set(src ${PROJECT_SOURCE_DIR}/exercises/solutions/${stem}.cpp)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${src})
  file(READ ${src} text)
  string(FIND "${text}" "${from}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "mutants.cmake: '${from}' is no longer in exercises/solutions/${stem}.cpp; update the mutant")
  endif()
  string(REPLACE "${from}" "${to}" text "${text}")
  # The k-th mutant of this solution.
  get_property(count GLOBAL PROPERTY SF_MUTANT_COUNT_${stem})
  if(NOT count)
    set(count 0)
  endif()
  math(EXPR count "${count} + 1")
  set_property(GLOBAL PROPERTY SF_MUTANT_COUNT_${stem} ${count})
  set(name ${stem}_${count})
  set(out ${SF_MUTANT_DIR}/${name}.cpp)
  set(old "")
  if(EXISTS ${out})
    file(READ ${out} old)
  endif()
  if(NOT old STREQUAL text)  # unchanged files keep their timestamps: no rebuild
    file(WRITE ${out} "${text}")
  endif()
  # The mutant's object file comes before the solutions' library on the link line, so it defines
  # the exercise's functions and that solution's own object is never pulled in.
  add_executable(exercise_mutant_${name} ${out} $<TARGET_OBJECTS:sf_exercise_mutant_main>)
  # A mutant is deliberately wrong code: a deleted term can leave a variable unused.
  set_source_files_properties(${out} PROPERTIES COMPILE_OPTIONS "-w")
  target_link_libraries(exercise_mutant_${name} PRIVATE sf_options sf_exercise_checks sf_exercise_solutions)
  add_test(NAME exercise_mutant_${name} COMMAND exercise_mutant_${name} ${stem} ${ARGN})
  set_property(TEST exercise_mutant_${name} PROPERTY LABELS exercise_mutants)
endfunction()

sf_mutant(01_tanh_backward "dy * (1.0 - y * y)" "dy * (1.0 - y)")
sf_mutant(01_tanh_backward "dy * (1.0 - y * y)" "(1.0 - y * y)")  # dy ignored
sf_mutant(01_tanh_backward "return dy * (1.0 - y * y);" "return (dy * (1.0 - y * y)).to(DType::f64);")
sf_mutant(02_sum_to_shape "if (!ones.empty()) out = sum(out, ones, /*keepdim=*/true)" "if (ones.empty()) out = out")
sf_mutant(02_sum_to_shape "return out;" "return out.to(DType::f64);")
sf_mutant(03_embedding_backward "dW[id * C + c] += d" "dW[id * C + c] = d")
sf_mutant(03_embedding_backward "return Tensor::from_vector(dW, {V, C}, dout.dtype())"
          "return Tensor::from_vector(dW, {V, C}, DType::f64)")
sf_mutant(04_sinusoidal_positions "static_cast<double>(c - c % 2)" "static_cast<double>(c)")
sf_mutant(04_sinusoidal_positions "static_cast<double>(offset + t)" "static_cast<double>(t)")
sf_mutant(05_softmax_forward "exp(x - m)" "exp(x)")
sf_mutant(05_softmax_forward "(sum(e, -1, /*keepdim=*/true) + fully_masked)" "sum(e, -1, /*keepdim=*/true)")
sf_mutant(05_softmax_forward "Tensor fully_masked = Tensor::from_vector(empty, m.shape(), x.dtype())"
          "Tensor fully_masked = Tensor::from_vector(empty, m.shape(), DType::f64)")
sf_mutant(06_softmax_backward "y * (dy - sum(dy * y, {-1}, /*keepdim=*/true))" "dy * y * (1.0 - y)")
sf_mutant(06_softmax_backward "sum(dy * y, {-1}, /*keepdim=*/true)" "sum(y, {-1}, /*keepdim=*/true)")
sf_mutant(06_softmax_backward "sum(dy * y, {-1}, /*keepdim=*/true)" "sum(dy * y)")
sf_mutant(07_cross_entropy "Tensor z = x - max(x, -1, /*keepdim=*/true)" "Tensor z = x")
sf_mutant(07_cross_entropy "(dloss.item() / static_cast<double>(N))" "(1.0 / static_cast<double>(N))")  # dloss ignored
sf_mutant(07_cross_entropy "return Tensor::from_vector(h, {N, V}, dtype)" "return Tensor::from_vector(h, {N, V}, DType::f64)")
sf_mutant(07_cross_entropy "targets[n] < 0 || targets[n] >= V" "targets[n] < 0")  # target V accepted
sf_mutant(07_cross_entropy "targets[n] < 0 || targets[n] >= V" "targets[n] >= V")  # target -1 accepted
sf_mutant(07_cross_entropy "(dloss.item() / static_cast<double>(N))" "dloss.item()")  # no 1/N
sf_mutant(08_causal_attention "s > S - T + t" "s > t")
sf_mutant(08_causal_attention " / std::sqrt(static_cast<double>(D))" "")
sf_mutant(08_causal_attention "return matmul(softmax(scores, -1), v);" "return matmul(softmax(scores, -1), v).to(DType::f64);")
sf_mutant(09_online_softmax "if (score == -std::numeric_limits<double>::infinity()) return" "if (score != score) return")
sf_mutant(09_online_softmax "state.sum * std::exp(state.max - score) + 1.0" "state.sum + 1.0")
sf_mutant(09_online_softmax "b.sum * std::exp(b.max - m)" "b.sum")
sf_mutant(10_split_merge_heads "transpose(reshape(x, {B, T, H, C / H}), 1, 2)" "reshape(x, {B, H, T, C / H})")
sf_mutant(10_split_merge_heads "reshape(transpose(x, 1, 2), {B, T, H * D})" "reshape(x, {B, T, H * D})")
sf_mutant(10_split_merge_heads "return transpose(reshape(x, {B, T, H, C / H}), 1, 2);"
          "return transpose(reshape(x, {B, T, H, C / H}), 1, 2).to(DType::f64);")
sf_mutant(11_layer_norm_forward "mean(xc * xc, {-1}, /*keepdim=*/true)"
          "mean(x * x, {-1}, true) - mean(x, {-1}, true) * mean(x, {-1}, true)")
sf_mutant(11_layer_norm_forward "sqrt(var + eps)" "sqrt(var + 1e-5)")  # eps argument ignored
sf_mutant(11_layer_norm_forward "sqrt(var + eps)" "(sqrt(var) + eps)")
sf_mutant(12_layer_norm_backward " - xhat * mean(g * xhat, {-1}, true)" "")  # the variance term
sf_mutant(12_layer_norm_backward "+ eps);" "+ 1e-5);")  # eps argument ignored
sf_mutant(12_layer_norm_backward " - mean(g, {-1}, true)" "")  # the mean term
sf_mutant(12_layer_norm_backward "sum(dy, rows)}" "sum(dy * w, rows)}")
sf_mutant(13_gelu "(1.0 + 3.0 * 0.044715 * x * x)" "(1.0 + 0.0 * x)")
sf_mutant(13_gelu "return dy * (0.5" "return (0.5")  # dy ignored
sf_mutant(14_kv_cache_append "cache.k = concat({cache.k, k}, 2)" "cache.k = k")
sf_mutant(14_kv_cache_append "cache.v = concat({cache.v, v}, 2)" "cache.v = concat({cache.v, k}, 2)")
sf_mutant(15_warmup_cosine "static_cast<double>(step + 1) / static_cast<double>(s.warmup_steps + 1)"
          "static_cast<double>(step) / static_cast<double>(s.warmup_steps)")
sf_mutant(15_warmup_cosine "std::min(1.0, " "(")  # no floor after decay_steps
sf_mutant(15_warmup_cosine "s.min_lr + (s.lr - s.min_lr) *" "s.lr *")
sf_mutant(16_clip_grad_norm "if (c < 1.0)" "if (c == c)")
sf_mutant(16_clip_grad_norm "squares += x * x" "squares += std::fabs(x)")
sf_mutant(17_adamw_step "c.lr / bc1 * m[i] / (std::sqrt(v[i]) / std::sqrt(bc2) + c.eps)"
          "c.lr * m[i] / (std::sqrt(v[i]) + c.eps + 0 * bc1 * bc2)")
sf_mutant(17_adamw_step "std::sqrt(bc2) + c.eps)" "std::sqrt(bc2) + 1e-8)")  # eps argument ignored
sf_mutant(17_adamw_step "p[i] *= 1.0 - c.lr * c.weight_decay;" "")
sf_mutant(17_adamw_step "std::pow(c.beta2," "std::pow(0.999,")
sf_mutant(18_loss_scaling "std::isfinite(x)" "!std::isnan(x)")
sf_mutant(18_loss_scaling "s.scale *= s.backoff_factor" "s.scale *= 0.5")
sf_mutant(18_loss_scaling "s.scale *= s.growth_factor" "s.scale *= 2.0")
# The assembly exercises: the mutant of one piece runs with every other piece right. Each names
# the diagnosis its FAIL line must give (check_assembly.cpp recomputes the module with the mistake).
# 19: no 1/sqrt(D); a mask that ignores the cache offset; the cache replaced, not appended to; q
# taken from k's chunk; no mask; a mask off by one either way; heads merged without the transpose;
# no output projection.
sf_mutant(19_self_attention "/ std::sqrt(static_cast<double>(D))" "/ (0.0 * static_cast<double>(D) + 1.0)"
          "not divided by sqrt(head_dim)")
sf_mutant(19_self_attention "s > S - T + t" "s > t" "the mask ignores the cache offset")
sf_mutant(19_self_attention "kv_cache_append(*cache, k, v);" "cache->k = k;\n    cache->v = v;"
          "replace the cache instead of being appended")
sf_mutant(19_self_attention "slice(qkv, 2, 0, C)" "slice(qkv, 2, C, 2 * C)" "q is taken from k's chunk")
sf_mutant(19_self_attention "s > S - T + t ? 1.0" "false ? 1.0" "there is no causal mask")
sf_mutant(19_self_attention "s > S - T + t" "s > S - T + t + 1" "the mask is off by one")
sf_mutant(19_self_attention "exercise::merge_heads(y)" "reshape(y, {y.size(0), y.size(2), C})"
          "without moving the head axis back")
sf_mutant(19_self_attention "return linear(exercise::merge_heads(y), attn.c_proj.weight, attn.c_proj.bias);"
          "return exercise::merge_heads(y);" "the output projection c_proj is left out")
# 19 with the framework's softmax, merge_heads or split_heads (lesson 7's 4-argument form) instead
# of yours.
sf_mutant(19_self_attention "your_softmax(scores)" "softmax(scores, -1)" "the framework's softmax op is in your graph")
sf_mutant(19_self_attention "exercise::merge_heads(y)" "sf::merge_heads(y)" "the framework's merge_heads op")
sf_mutant(19_self_attention "split_heads(slice(qkv, 2, 0, C), H)" "sf::split_heads(qkv, 3, 0, H)"
          "the framework's slice_heads op")
# 20: LayerNorm after attention's residual add (Post-LN's first half); the MLP without its residual;
# eps fixed at 1e-5; Post-LN throughout; attention without its residual; ln_1 where ln_2 belongs.
# The first one comes first: test_capstone_wrong_piece links its file (20_transformer_block_1).
sf_mutant(20_transformer_block
          "Tensor h = x + causal_self_attention(block.attn, your_layer_norm(x, ln_1.weight, ln_1.bias, ln_1.eps), cache);"
          "Tensor h = your_layer_norm(x + causal_self_attention(block.attn, x, cache), ln_1.weight, ln_1.bias, ln_1.eps);"
          "ln_1 is applied after the residual add")
sf_mutant(20_transformer_block "return h + linear(a" "return 0.0 * h + linear(a" "the MLP's residual is missing")
sf_mutant(20_transformer_block "ln_2.bias, ln_2.eps)" "ln_2.bias, 1e-5)" "ln_2 uses eps 1e-5")
sf_mutant(20_transformer_block
          "Tensor h = x + causal_self_attention(block.attn, your_layer_norm(x, ln_1.weight, ln_1.bias, ln_1.eps), cache);
  Tensor a = your_gelu(linear(your_layer_norm(h, ln_2.weight, ln_2.bias, ln_2.eps), block.mlp.c_fc.weight,
                              block.mlp.c_fc.bias));                     // (B, T, 4C)
  return h + linear(a, block.mlp.c_proj.weight, block.mlp.c_proj.bias);"
          "Tensor h = your_layer_norm(x + causal_self_attention(block.attn, x, cache), ln_1.weight, ln_1.bias, ln_1.eps);
  Tensor a = your_gelu(linear(h, block.mlp.c_fc.weight, block.mlp.c_fc.bias));
  return your_layer_norm(h + linear(a, block.mlp.c_proj.weight, block.mlp.c_proj.bias), ln_2.weight, ln_2.bias, ln_2.eps);"
          "it is Post-LN")
sf_mutant(20_transformer_block "Tensor h = x + causal_self_attention" "Tensor h = causal_self_attention"
          "the attention's residual is missing")
sf_mutant(20_transformer_block "your_layer_norm(h, ln_2.weight, ln_2.bias, ln_2.eps)"
          "your_layer_norm(h, ln_1.weight, ln_1.bias, ln_1.eps)" "ln_1 is used where ln_2 belongs")
# 20 with the framework's LayerNorm and MLP (values all right, none of the learner's pieces run).
sf_mutant(20_transformer_block "return h + linear(a, block.mlp.c_proj.weight, block.mlp.c_proj.bias);"
          "return h + block.mlp.forward(block.ln_2.forward(h));" "the framework's layer_norm op is in your graph")
# 21: positions that restart at 0 with a cache; no final LayerNorm; the loss summed, not averaged;
# no position embeddings; the blocks without the cache; no block_size check of its own.
sf_mutant(21_gpt_forward "const int64_t offset = cache != nullptr ? cache->length() : 0;"
          "const int64_t offset = 0;" "the positions restart at 0")
sf_mutant(21_gpt_forward "x = your_layer_norm(x, model.ln_f->weight, model.ln_f->bias, model.ln_f->eps);"
          "" "the final LayerNorm ln_f is left out")
sf_mutant(21_gpt_forward "out.loss = your_cross_entropy(reshape(out.logits, {B * T, V}), flat);"
          "out.loss = your_cross_entropy(reshape(out.logits, {B * T, V}), flat) * static_cast<double>(B * T);"
          "the loss is summed")
sf_mutant(21_gpt_forward " + your_embedding(model.wpe->weight, IntTensor({T}, pos))" ""
          "the position embeddings are not added")
sf_mutant(21_gpt_forward "cache != nullptr ? &cache->layers[i] : nullptr" "nullptr" "the blocks do not get the cache")
sf_mutant(21_gpt_forward "if (offset + T > model.config().block_size)" "if (false)" "does not name block_size")
# 21 with the framework's embedding or cross-entropy.
sf_mutant(21_gpt_forward "your_embedding(model.wte.weight, idx)" "embedding(model.wte.weight, idx)"
          "the framework's embedding op is in your graph")
sf_mutant(21_gpt_forward "your_cross_entropy(reshape(out.logits, {B * T, V}), flat)"
          "cross_entropy(reshape(out.logits, {B * T, V}), flat)" "use your_cross_entropy")
# 22: gradients that pile up across steps; no clipping; the config's lr instead of the schedule's;
# weight decay on every parameter; the schedule read one step early; its rate applied one step late.
sf_mutant(22_train_step "  model.zero_grad();\n" "" "the gradients are not zeroed")
sf_mutant(22_train_step "r.grad_norm = clip_grad_norm(grads, config.max_norm);"
          "r.grad_norm = clip_grad_norm(grads, 1e30);" "unclipped gradients")
sf_mutant(22_train_step "    c.lr = r.lr;\n" "" "uses config.adamw.lr instead of the schedule's rate")
sf_mutant(22_train_step "if (params[i].dim() < 2) c.weight_decay = 0.0;" ""
          "weight decay is applied to every parameter")
sf_mutant(22_train_step "warmup_cosine_lr(config.schedule, state.step)" "warmup_cosine_lr(config.schedule, state.step + 1)"
          "state.step is advanced before the schedule is read")
sf_mutant(22_train_step "    c.lr = r.lr;\n"
          "    c.lr = state.step == 0 ? config.adamw.lr : warmup_cosine_lr(config.schedule, state.step - 1);\n"
          "applied one step late")
# 23: temperature ignored; top_k ignored; a top_p prefix that stops short of the token crossing
# top_p; the whole context fed again at every token; top_k keeping k + 1 or k - 1; the temperature
# applied after the exponential; each new token fed without the cache.
sf_mutant(23_generate "/ s.temperature)" ")" "the temperature is ignored")
sf_mutant(23_generate "if (s.top_k > 0) keep" "if (s.top_k < 0) keep" "top_k is ignored")
sf_mutant(23_generate "mass < s.top_p * total" "mass + p[n] < s.top_p * total" "top_p leaves out the token")
sf_mutant(23_generate "    next = {token};\n" "    next = context();\n" "the whole context is fed again")
sf_mutant(23_generate "static_cast<size_t>(s.top_k))" "static_cast<size_t>(s.top_k + 1))" "top_k keeps k + 1")
sf_mutant(23_generate "static_cast<size_t>(s.top_k))" "static_cast<size_t>(s.top_k - 1))" "top_k keeps k - 1")
sf_mutant(23_generate "std::exp((logits[order[i]] - logits[order[0]]) / s.temperature)"
          "std::exp(logits[order[i]] - logits[order[0]]) / s.temperature" "applied after the softmax")
sf_mutant(23_generate "nullptr, &cache).logits" "nullptr, nullptr).logits" "each new token is fed without the cache")
sf_mutant(24_attention_backward "Tensor dq = matmul(dS, k) * scale" "Tensor dq = matmul(dS, k)")  # no 1/sqrt(D)
sf_mutant(24_attention_backward "P * (dP - sum(dP * P, -1, /*keepdim=*/true))" "P * dP")
sf_mutant(24_attention_backward "s > S - T + t" "s > t")
sf_mutant(24_attention_backward "return {dq, dk, dv};" "return {dq.to(DType::f64), dk, dv};")
sf_mutant(28_sliding_window_mask "s <= p - W" "s < p - W")  # W + 1 keys
sf_mutant(28_sliding_window_mask "const int64_t p = S - T + t" "const int64_t p = t")
sf_mutant(28_sliding_window_mask "W < 1 || " "")
sf_mutant(29_kv_cache_bytes "2 * n_layer * n_kv_head" "2 * n_layer * n_head")
sf_mutant(29_kv_cache_bytes " || n_head % n_kv_head != 0" "")
sf_mutant(25_attention_cost "T * (T + 1) * C" "2 * T * T * C")  # every key for every query
sf_mutant(25_attention_cost "12 * T * C * C" "4 * T * C * C")  # the MLP left out
sf_mutant(25_attention_cost "H * T * T * bytes_per_number" "T * T * bytes_per_number")
sf_mutant(25_attention_cost " || C % H != 0" "")
sf_mutant(26_softmax_entropy "p * log(safe)" "p * log(p)")  # 0 log 0 = nan
sf_mutant(26_softmax_entropy "-sum(p * log(safe), -1)" "sum(p * log(safe), -1)")
sf_mutant(26_softmax_entropy "Tensor::zeros(p.shape(), p.dtype())" "Tensor::zeros(p.shape(), DType::f64)")
sf_mutant(27_partial_rows "a.out[d] * ca + b.out[d] * cb" "a.out[d] + b.out[d]")  # out not rescaled
sf_mutant(27_partial_rows "if (a.max == -inf) return b;" "")
sf_mutant(27_partial_rows "m.sum = a.sum * ca + b.sum * cb" "m.sum = a.sum + b.sum * cb")
sf_mutant(30_rope_alibi "x2 * cos_t + x1 * sin_t" "x2 * cos_t - x1 * sin_t")
sf_mutant(30_rope_alibi "static_cast<double>(offset + t) *" "static_cast<double>(t) *")
sf_mutant(30_rope_alibi "Tensor::from_vector(c, {T, half}, x.dtype())" "Tensor::from_vector(c, {T, half}, DType::f64)")
sf_mutant(30_rope_alibi "std::llabs(S - T + t - s)" "std::llabs(t - s)")  # the cache offset forgotten
sf_mutant(31_grad_accumulation "static_cast<double>(rows[k]) * micro_grads[k][i]" "micro_grads[k][i]")
sf_mutant(31_grad_accumulation "g /= static_cast<double>(all_rows)" "g /= 1.0")
sf_mutant(31_grad_accumulation "rows[k] < 1 || " "")
