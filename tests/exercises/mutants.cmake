# mutants.cmake: each solution with one plausible mistake, the kind a learner makes (a missing
# max subtraction, an assignment where gradients must add up, a mask that forgets the cache
# offset, ...). test_exercise_mutants links them with the same checks and requires every
# exercise to fail: a check that cannot fail would pass its mutant. Each mistake is one text
# replacement in the solution; configuring fails when the text is no longer there.
set(SF_MUTANT_DIR ${CMAKE_CURRENT_BINARY_DIR}/mutants)
set(SF_MUTANT_FILES)

function(sf_mutant stem from to)
  set(src ${PROJECT_SOURCE_DIR}/exercises/solutions/${stem}.cpp)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${src})
  file(READ ${src} text)
  string(FIND "${text}" "${from}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "mutants.cmake: '${from}' is no longer in exercises/solutions/${stem}.cpp; update the mutant")
  endif()
  string(REPLACE "${from}" "${to}" text "${text}")
  set(out ${SF_MUTANT_DIR}/${stem}.cpp)
  set(old "")
  if(EXISTS ${out})
    file(READ ${out} old)
  endif()
  if(NOT old STREQUAL text)  # unchanged files keep their timestamps: no rebuild
    file(WRITE ${out} "${text}")
  endif()
  set(SF_MUTANT_FILES ${SF_MUTANT_FILES} ${out} PARENT_SCOPE)
endfunction()

sf_mutant(01_tanh_backward "dy * (1.0 - y * y)" "dy * (1.0 - y)")
sf_mutant(02_sum_to_shape "if (!ones.empty()) out = sum(out, ones, /*keepdim=*/true)" "if (ones.empty()) out = out")
sf_mutant(03_embedding_backward "dW[id * C + c] += d" "dW[id * C + c] = d")
sf_mutant(04_sinusoidal_positions "static_cast<double>(c - c % 2)" "static_cast<double>(c)")
sf_mutant(05_softmax_forward "exp(x - m)" "exp(x)")
sf_mutant(06_softmax_backward "y * (dy - sum(dy * y, {-1}, /*keepdim=*/true))" "dy * y * (1.0 - y)")
sf_mutant(07_cross_entropy "Tensor z = x - max(x, -1, /*keepdim=*/true)" "Tensor z = x")
sf_mutant(08_causal_attention "s > S - T + t" "s > t")
sf_mutant(09_online_softmax "if (score == -std::numeric_limits<double>::infinity()) return" "if (score != score) return")
sf_mutant(10_split_merge_heads "transpose(reshape(x, {B, T, H, C / H}), 1, 2)" "reshape(x, {B, H, T, C / H})")
sf_mutant(11_layer_norm_forward "mean(xc * xc, {-1}, /*keepdim=*/true)"
          "mean(x * x, {-1}, true) - mean(x, {-1}, true) * mean(x, {-1}, true)")
sf_mutant(12_layer_norm_backward " - xhat * mean(g * xhat, {-1}, true)" "")
sf_mutant(13_gelu "(1.0 + 3.0 * 0.044715 * x * x)" "(1.0 + 0.0 * x)")
sf_mutant(14_kv_cache_append "cache.k = concat({cache.k, k}, 2)" "cache.k = k")
sf_mutant(15_warmup_cosine "static_cast<double>(step + 1) / static_cast<double>(s.warmup_steps + 1)"
          "static_cast<double>(step) / static_cast<double>(s.warmup_steps)")
sf_mutant(16_clip_grad_norm "if (c < 1.0)" "if (c == c)")
sf_mutant(17_adamw_step "c.lr / bc1 * m[i] / (std::sqrt(v[i]) / std::sqrt(bc2) + c.eps)"
          "c.lr * m[i] / (std::sqrt(v[i]) + c.eps + 0 * bc1 * bc2)")
sf_mutant(18_loss_scaling "std::isfinite(x)" "!std::isnan(x)")

# The assembly exercises (19-23) call the earlier ones, so in the library above they keep their
# solutions (a mutated softmax would fail them for a mistake that is not theirs); their mutants
# run one at a time below.
foreach(stem 19_self_attention 20_transformer_block 21_gpt_forward 22_train_step 23_generate)
  list(APPEND SF_MUTANT_FILES ${PROJECT_SOURCE_DIR}/exercises/solutions/${stem}.cpp)
endforeach()
list(APPEND SF_MUTANT_FILES ${PROJECT_SOURCE_DIR}/exercises/your_ops.cpp)

add_library(sf_exercise_mutants STATIC ${SF_MUTANT_FILES})
target_link_libraries(sf_exercise_mutants PUBLIC sf_options sf::autograd sf::nn)

# Mutants of the assembly exercises, one mistake each: the mutated file alone in a library linked
# before the solutions, so the exercise runs with every other piece right, in a test binary of its
# own (test_exercise_mutant_<name>) that requires exercise `number` to fail.
function(sf_assembly_mutant name number stem from to)
  set(src ${PROJECT_SOURCE_DIR}/exercises/solutions/${stem}.cpp)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${src})
  file(READ ${src} text)
  string(FIND "${text}" "${from}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "mutants.cmake: '${from}' is no longer in exercises/solutions/${stem}.cpp; update mutant ${name}")
  endif()
  string(REPLACE "${from}" "${to}" text "${text}")
  set(out ${SF_MUTANT_DIR}/${name}/${stem}.cpp)
  set(old "")
  if(EXISTS ${out})
    file(READ ${out} old)
  endif()
  if(NOT old STREQUAL text)
    file(WRITE ${out} "${text}")
  endif()
  add_library(sf_mutant_${name} STATIC ${out})
  target_link_libraries(sf_mutant_${name} PUBLIC sf_options sf::autograd sf::nn)
  sf_add_test(test_exercise_mutant_${name} SOURCES test_exercises.cpp
              LIBS sf_exercise_checks sf_mutant_${name} sf_exercise_solutions)
  target_compile_definitions(test_exercise_mutant_${name} PRIVATE SF_EXERCISE_VARIANT=3 SF_MUTANT_EXERCISE=${number}
                                                                  SF_MUTANT_EXERCISE_STR="${number}"
                                                                  SF_MUTANT_NAME="${name}")
endfunction()

# 19: no 1/sqrt(D); a mask that ignores the cache offset; the cache never appended to; q taken from k's chunk.
sf_assembly_mutant(attention_unscaled 19 19_self_attention "/ std::sqrt(static_cast<double>(D))"
                   "/ (0.0 * static_cast<double>(D) + 1.0)")
sf_assembly_mutant(attention_mask_offset 19 19_self_attention "s > S - T + t" "s > t")
sf_assembly_mutant(attention_no_cache 19 19_self_attention "kv_cache_append(*cache, k, v);" "cache->k = k;\n    cache->v = v;")
sf_assembly_mutant(attention_q_from_k 19 19_self_attention "slice(qkv, 2, 0, C)" "slice(qkv, 2, C, 2 * C)")
# 20: Post-LN instead of Pre-LN; the MLP without its residual; eps fixed at 1e-5.
sf_assembly_mutant(block_post_ln 20 20_transformer_block
                   "Tensor h = x + causal_self_attention(block.attn, your_layer_norm(x, ln_1.weight, ln_1.bias, ln_1.eps), cache);"
                   "Tensor h = your_layer_norm(x + causal_self_attention(block.attn, x, cache), ln_1.weight, ln_1.bias, ln_1.eps);")
sf_assembly_mutant(block_no_mlp_residual 20 20_transformer_block "return h + linear(a" "return 0.0 * h + linear(a")
sf_assembly_mutant(block_fixed_eps 20 20_transformer_block "ln_2.bias, ln_2.eps)" "ln_2.bias, 1e-5)")
# 21: positions that restart at 0 with a cache; no final LayerNorm; the loss summed, not averaged.
sf_assembly_mutant(gpt_positions_from_zero 21 21_gpt_forward
                   "const int64_t offset = cache != nullptr ? cache->length() : 0;" "const int64_t offset = 0;")
sf_assembly_mutant(gpt_no_ln_f 21 21_gpt_forward "x = your_layer_norm(x, model.ln_f->weight, model.ln_f->bias, model.ln_f->eps);" "")
sf_assembly_mutant(gpt_loss_sum 21 21_gpt_forward "out.loss = your_cross_entropy(reshape(out.logits, {B * T, V}), flat);"
                   "out.loss = your_cross_entropy(reshape(out.logits, {B * T, V}), flat) * static_cast<double>(B * T);")
# 22: gradients that pile up across steps; no clipping; the config's lr instead of the schedule's;
# weight decay on every parameter.
sf_assembly_mutant(step_no_zero_grad 22 22_train_step "  model.zero_grad();\n" "")
sf_assembly_mutant(step_no_clip 22 22_train_step "r.grad_norm = clip_grad_norm(grads, config.max_norm);"
                   "r.grad_norm = clip_grad_norm(grads, 1e30);")
sf_assembly_mutant(step_no_schedule 22 22_train_step "    c.lr = r.lr;\n" "")
sf_assembly_mutant(step_decay_everything 22 22_train_step "if (params[i].dim() < 2) c.weight_decay = 0.0;" "")
# 23: temperature ignored; top_k ignored; a top_p prefix that stops short of the token crossing top_p; generate without the cache
# (the whole sequence fed again at every token).
sf_assembly_mutant(sample_no_temperature 23 23_generate "/ s.temperature)" ")")
sf_assembly_mutant(sample_no_top_k 23 23_generate "if (s.top_k > 0) keep" "if (s.top_k < 0) keep")
sf_assembly_mutant(sample_top_p_short 23 23_generate "mass < s.top_p * total" "mass + p[n] < s.top_p * total")
sf_assembly_mutant(generate_no_cache 23 23_generate "    next = {token};\n" "    next = context();\n")
