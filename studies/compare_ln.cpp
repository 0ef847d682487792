// compare_ln.cpp: the Pre-LN versus Post-LN study. Reads top to bottom: load the study, then
// the four measurements, then the report whose sentences are computed from the measurements.
#include "studies/compare_ln.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <optional>
#include <ostream>
#include <sstream>

#include <kainjow/mustache.hpp>

#include "autograd/ops.h"
#include "data/lm_batches.h"
#include "nn/gpt.h"
#include "studies/compare_ln_report.h"
#include "train/atomic_file.h"
#include "train/lm_data.h"
#include "train/metrics.h"
#include "train/run_dir.h"
#include "train/task.h"
#include "train/train.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace sf {

// ---- the study config ----

CompareStudy load_compare_study(const std::string& path, const std::vector<std::string>& overrides) {
  if (!fs::is_regular_file(path)) throw ConfigError("study config not found: " + path);
  std::ifstream in(path);
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw ConfigError(path + ": invalid JSON (expected an object)");
  CompareStudy study;
  try {
    for (const std::string& s : overrides) apply_override(j, s);  // compare.* overrides too
    json compare = j.contains("compare") ? j["compare"] : json::object();
    j.erase("compare");
    if (!compare.is_object()) throw ConfigError("compare: must be an object");
    CompareOptions& o = study.options;
    const char* valid = "valid: grad_batches, depths, warmup_steps, train_curves, seeds, lrs, quick";
    for (auto& item : compare.items()) {
      // (named copies, not a structured binding: clang 14 cannot capture those in a lambda)
      const std::string key = item.key();
      const json& value = item.value();
      auto wrong_type = [&] { return ConfigError("compare." + key + ": wrong type, got " + value.dump()); };
      if (key == "grad_batches" || key == "warmup_steps" || key == "seeds") {
        if (!value.is_number_integer()) throw wrong_type();
        (key == "grad_batches" ? o.grad_batches : key == "seeds" ? o.seeds : o.warmup_steps) = value.get<int64_t>();
      } else if (key == "train_curves" || key == "quick") {
        if (!value.is_boolean()) throw wrong_type();
        (key == "quick" ? o.quick : o.train_curves) = value.get<bool>();
      } else if (key == "depths") {
        if (!value.is_array() || value.empty()) throw wrong_type();
        o.depths.clear();
        for (const json& d : value) {
          if (!d.is_number_integer() || d.get<int64_t>() < 1 || d.get<int64_t>() > 64)
            throw ConfigError("compare.depths: every depth must be a whole number from 1 to 64, got " + d.dump());
          o.depths.push_back(d.get<int64_t>());
        }
      } else if (key == "lrs") {
        if (!value.is_array()) throw wrong_type();
        o.lrs.clear();
        for (const json& r : value) {
          // (at most float32's largest, as optim.lr: the optimizer computes in float32)
          if (!r.is_number() || r.get<double>() <= 0 || r.get<double>() > std::numeric_limits<float>::max())
            throw ConfigError(
                "compare.lrs: every learning rate must be a number > 0 and at most 3.4028234663852886e+38 (the "
                "largest float32), got " +
                r.dump());
          o.lrs.push_back(r.get<double>());
        }
      } else {
        throw ConfigError("compare." + key + ": unknown key (" + valid + ")");
      }
    }
    if (o.grad_batches < 1)
      throw ConfigError("compare.grad_batches: must be >= 1, got " + std::to_string(o.grad_batches));
    if (o.warmup_steps < 1)
      throw ConfigError("compare.warmup_steps: must be >= 1, got " + std::to_string(o.warmup_steps));
    if (o.seeds < 1 || o.seeds > 100)
      throw ConfigError("compare.seeds: must be from 1 to 100, got " + std::to_string(o.seeds));
    if (o.quick) {  // for tests and a first look: fewer seeds and batches, no sweep beyond optim.lr
      o.seeds = std::min<int64_t>(o.seeds, 2);
      o.grad_batches = std::min<int64_t>(o.grad_batches, 4);
      o.lrs.clear();
    }
    study.base = config_from_json(j);
    validate_config(study.base);
    if (study.base.model.type != ModelType::gpt || is_seq2seq_dataset(study.base.data.dataset))
      throw ConfigError("model.type: the study trains a GPT on a language-modelling dataset, got " +
                        std::string(option_name(study.base.model.type)) + " on " +
                        option_name(study.base.data.dataset));
    if (o.train_curves && o.warmup_steps >= study.base.train.steps)
      throw ConfigError("compare.warmup_steps: must be shorter than train.steps (" +
                        std::to_string(study.base.train.steps) + "), got " + std::to_string(o.warmup_steps));
  } catch (const ConfigError& e) { throw ConfigError(path + ": " + e.what()); }
  return study;
}

// ---- measurements ----

namespace {

// One variant of the base config: a norm placement, a depth, a seed (initial weights and batches).
Config variant(const Config& base, NormPlacement norm, int64_t layers, int64_t seed) {
  Config c = base;
  c.model.norm = norm;
  c.model.n_layer = layers;
  c.model.dropout = 0.0;
  c.train.seed = seed;
  return c;
}

// Measurement 1: for each block, the gradient of mlp.c_proj.weight averaged element-wise over
// `batches` mini-batches, then its Frobenius norm.
std::vector<double> ffn_grad_norms(const Config& c, int64_t batches) {
  std::unique_ptr<Task> task = make_task(c);
  Module& model = task->model();
  std::vector<Tensor> w2;
  for (int64_t i = 0; i < c.model.n_layer; ++i)
    w2.push_back(model.parameter("transformer.h." + std::to_string(i) + ".mlp.c_proj.weight"));
  std::vector<std::vector<double>> mean(w2.size());
  for (int64_t b = 0; b < batches; ++b) {
    model.zero_grad();
    task->train_loss().backward();
    for (size_t i = 0; i < w2.size(); ++i) {
      std::vector<double> g = w2[i].grad().to_vector();
      if (mean[i].empty()) mean[i].assign(g.size(), 0.0);
      for (size_t k = 0; k < g.size(); ++k) mean[i][k] += g[k] / static_cast<double>(batches);
    }
  }
  std::vector<double> norms;
  for (const auto& m : mean) {
    double s = 0;
    for (double x : m) s += x * x;
    norms.push_back(std::sqrt(s));
  }
  return norms;
}

// Measurement 3: the mean L2 norm of a token's hidden vector entering block 1 (layer 0) and
// after each block (layers 1..L), averaged over `batches` training batches, at initialisation.
std::vector<double> hidden_norms(const Config& c, int64_t batches) {
  std::unique_ptr<Task> task = make_task(c);
  GPT& gpt = *as_gpt(*task);
  data::LmData data = load_lm_data(c, task->tokenizer_json());
  int64_t T = c.data.block_size ? c.data.block_size : c.model.block_size;
  data::RandomWindows windows(data.train, T, c.train.batch_size, static_cast<uint64_t>(c.train.seed));
  std::vector<double> norms(static_cast<size_t>(c.model.n_layer + 1), 0.0);
  NoGradGuard no_grad;
  auto mean_token_norm = [](const Tensor& x) {  // x (B, T, C)
    std::vector<double> v = x.to_vector();
    int64_t C = x.size(-1), n = x.numel() / C;
    double total = 0;
    for (int64_t t = 0; t < n; ++t) {
      double s = 0;
      for (int64_t k = 0; k < C; ++k) s += v[t * C + k] * v[t * C + k];
      total += std::sqrt(s);
    }
    return total / static_cast<double>(n);
  };
  AttentionMask causal;
  causal.causal = true;
  for (int64_t b = 0; b < batches; ++b) {
    data::LmBatch batch = windows.next();
    Tensor x = gpt.embed(batch.inputs);  // (B, T, C): what the model's own forward feeds block 1
    norms[0] += mean_token_norm(x) / static_cast<double>(batches);
    for (int64_t i = 0; i < c.model.n_layer; ++i) {
      x = gpt.h[static_cast<size_t>(i)].forward(x, causal);  // (B, T, C)
      norms[static_cast<size_t>(i + 1)] += mean_token_norm(x) / static_cast<double>(batches);
    }
  }
  return norms;
}

// Mean and sample standard deviation (0 for a single value) of finite values; NaN when none.
struct Stat {
  double mean = NAN, sd = NAN;
  int64_t n = 0;
};
Stat stat(const std::vector<double>& v) {
  Stat s;
  double sum = 0;
  for (double x : v)
    if (std::isfinite(x)) sum += x, ++s.n;
  if (s.n == 0) return s;
  s.mean = sum / static_cast<double>(s.n);
  double ss = 0;
  for (double x : v)
    if (std::isfinite(x)) ss += (x - s.mean) * (x - s.mean);
  s.sd = s.n > 1 ? std::sqrt(ss / static_cast<double>(s.n - 1)) : 0.0;
  return s;
}

// Per-index statistics of per-seed vectors of one length.
std::vector<Stat> stats(const std::vector<std::vector<double>>& per_seed) {
  std::vector<Stat> out;
  for (size_t i = 0; i < per_seed[0].size(); ++i) {
    std::vector<double> col;
    for (const auto& v : per_seed) col.push_back(v[i]);
    out.push_back(stat(col));
  }
  return out;
}

// The mean of the last n values (of all of them when there are fewer).
double mean_of_last(const std::vector<double>& v, int64_t n) {
  size_t k = std::min(v.size(), static_cast<size_t>(n));
  double s = 0;
  for (size_t i = v.size() - k; i < v.size(); ++i) s += v[i];
  return s / static_cast<double>(k);
}

// Centred moving average over `window` steps (shorter at the ends).
std::vector<double> smooth(const std::vector<double>& v, int64_t window) {
  std::vector<double> out(v.size());
  const int64_t n = static_cast<int64_t>(v.size()), h = window / 2;
  for (int64_t i = 0; i < n; ++i) {
    int64_t a = std::max<int64_t>(0, i - h), b = std::min<int64_t>(n - 1, i + h);
    double s = 0;
    for (int64_t k = a; k <= b; ++k) s += v[static_cast<size_t>(k)];
    out[static_cast<size_t>(i)] = s / static_cast<double>(b - a + 1);
  }
  return out;
}

// Least-squares slope of log(y) against log(x).
double loglog_slope(const std::vector<double>& x, const std::vector<double>& y) {
  double n = static_cast<double>(x.size()), sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    double lx = std::log(x[i]), ly = std::log(y[i]);
    sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

std::string num(double v, int digits = 4) {
  if (std::isnan(v)) return "diverged";
  std::ostringstream os;
  os << std::setprecision(digits) << v;
  return os.str();
}

// "mean ± sd" of a statistic, for tables.
std::string pm(const Stat& s, int digits = 4) {
  if (s.n == 0) return "diverged";
  return num(s.mean, digits) + " ± " + num(s.sd, 2);
}

std::string verdict(bool ok) { return ok ? "**reproduced**" : "**not reproduced**"; }

// Renders a gnuplot script to png_path; returns "" or a one-line note why there is no image.
// `noenhanced`: labels such as post_ln_no_warmup are printed as written, not as subscripts.
// The script is kept beside the image (name.gp) so that a reader can redraw or restyle it.
std::string plot(const std::string& body, const std::string& png_path) {
  std::string script = "set termoption noenhanced\nset grid\nset key noenhanced\n" + body;
  atomic_write_file(fs::path(png_path).replace_extension(".gp").string(), script + "\n");
  return render_gnuplot_png(script, png_path, 900, 520);
}

std::string data_block(const std::string& name, const std::vector<std::vector<double>>& columns) {
  std::ostringstream os;
  os << "$" << name << " << EOD\n";
  for (size_t r = 0; r < columns[0].size(); ++r) {
    for (size_t c = 0; c < columns.size(); ++c) os << (c ? " " : "") << num(columns[c][r], 8);
    os << "\n";
  }
  os << "EOD\n";
  return os.str();
}

// A gnuplot block with columns x, mean, mean - sd, mean + sd (from per-index statistics).
std::string band_block(const std::string& name, const std::vector<double>& x, const std::vector<Stat>& s) {
  std::vector<double> m, lo, hi;
  for (const Stat& t : s) m.push_back(t.mean), lo.push_back(t.mean - t.sd), hi.push_back(t.mean + t.sd);
  return data_block(name, {x, m, lo, hi});
}

// The plot commands of one mean line with its ± sd band.
std::string band_plot(const std::string& name, const std::string& color, const std::string& title) {
  return "$" + name + " u 1:3:4 w filledcurves fc rgb '" + color + "' fs transparent solid 0.2 noborder notitle, $" +
         name + " u 1:2 w lp lw 2 lc rgb '" + color + "' t '" + title + "'";
}

// The mean norm entering block 1 over seeds (layer 0 of the hidden norms).
double pre_hidden_at_input(const std::vector<std::vector<double>>& hidden_by_seed) {
  double s = 0;
  for (const auto& h : hidden_by_seed) s += h[0];
  return s / static_cast<double>(hidden_by_seed.size());
}

// One training run's outcome (NaN val loss when it diverged).
struct Run {
  std::string variant;  // post_ln_no_warmup, post_ln_warmup, pre_ln_no_warmup, pre_ln_warmup
  double lr = 0;
  int64_t seed = 0;
  double val_loss = NAN;
  std::vector<double> losses;
};

}  // namespace

// ---- the criteria of findings 1a and 1b ----

// One seed's last/first ratio: "grows" above `bar`, "about flat" within [1/band, band]. The report
// counts the seeds that pass with these too, so its counts and its verdicts cannot disagree.
static bool grows(double ratio, double bar) { return ratio > bar; }
static bool about_flat(double ratio, double band) { return ratio >= 1 / band && ratio <= band; }

bool grows_in_every_seed(const std::vector<double>& ratios, double bar) {
  if (ratios.empty()) return false;
  for (double r : ratios)
    if (!grows(r, bar)) return false;
  return true;
}

bool flat_in_every_seed(const std::vector<double>& pre_ratios, const std::vector<double>& post_ratios, double band) {
  if (pre_ratios.empty() || pre_ratios.size() != post_ratios.size()) return false;
  for (size_t k = 0; k < pre_ratios.size(); ++k)
    if (!(about_flat(pre_ratios[k], band) && pre_ratios[k] < post_ratios[k])) return false;
  return true;
}

// ---- the report ----

namespace {

// What the report says, as text ready to print: filled by the study from its measurements
// (Study::findings), printed by render_report through studies/compare_ln_report.md. Each field is
// the template's {{name}} of the same name; a bool opens a {{#section}}, a list repeats one.
struct ReportFindings {
  struct Row {  // a table row: layer or depth, Post-LN, Pre-LN
    std::string label, post, pre;
  };
  struct Variant {
    std::string variant, train_loss, val_loss;
  };
  struct SweepRow {
    std::string lr, post_no_warmup, post_warmup, pre_no_warmup, gap;
    bool matters;
  };
  struct Summary {  // one finding beside the paper's
    std::string id, ours, paper, result;
  };
  // The setting.
  std::string layers, n_embd, n_head, block_size, activation, pos_encoding, init;
  bool scale_embeddings = false, tie_weights = false;
  std::string dataset, data_file, batch_size, seed_first, seed_last, n_seeds;
  // 1. Gradient norms per layer at initialisation; findings 1a and 1b.
  std::string grad_batches;
  std::vector<Row> grad_rows;
  std::string post_ratio, pre_ratio, post_ratio_seeds, pre_ratio_seeds, bar, inverse_bar;
  bool post_mean_only = false;  // the mean passes the bar, not every seed
  std::string post_not_growing, verdict_1a;
  std::string pre_below_post, pre_flat;
  bool pre_falls = false;
  std::string pre_change, verdict_1b;
  // 2. The last layer versus depth; findings 2a and 2b (with two depths or more).
  std::vector<Row> depth_rows;
  bool depth_fit = false;
  std::string post_slope_seeds, pre_slope_seeds, pre_top_norms, pre_top_slope, pre_input_norm, deepest;
  std::string post_slope, pre_slope, verdict_2a, verdict_2b;
  // 3. Hidden-state norms.
  std::vector<Row> hidden_rows;
  std::string post_hidden_growth, pre_hidden_growth, sqrt_n_embd;
  // 4. Training; finding 4 and the learning-rate sweep.
  bool training = false;
  std::string optimizer, beta1, beta2, weight_decay, grad_clip, steps, warmup_steps, eval_iters, lr, lr_short, tail;
  std::vector<Variant> variant_rows;
  bool post_diverged = false;
  std::string post_gap, pre_gap, verdict_4;
  bool sweep = false;
  std::vector<SweepRow> sweep_rows;
  std::string first_matters;  // "" when warmup matters at none of the swept rates
  // Notes (diverged runs, missing images) and the closing table.
  std::vector<std::string> notes;
  std::vector<Summary> summary;
};

using Mustache = kainjow::mustache::mustache;
using MustacheData = kainjow::mustache::data;

template <class T, class F>
MustacheData list_of(const std::vector<T>& items, F&& to_data) {
  MustacheData list(MustacheData::type::list);
  for (const T& item : items) list.push_back(to_data(item));
  return list;
}

MustacheData report_data(const ReportFindings& f) {
  MustacheData d;
  auto text = [&](const char* name, const std::string& v) { d.set(name, v); };
  auto flag = [&](const char* name, bool v) { d.set(name, MustacheData(v)); };
  auto rows = [&](const char* name, const std::vector<ReportFindings::Row>& v, const char* label) {
    d.set(name, list_of(v, [&](const ReportFindings::Row& r) {
            MustacheData row;
            row.set(label, r.label);
            row.set("post", r.post);
            row.set("pre", r.pre);
            return row;
          }));
  };
  text("layers", f.layers), text("n_embd", f.n_embd), text("n_head", f.n_head), text("block_size", f.block_size);
  text("activation", f.activation), text("pos_encoding", f.pos_encoding), text("init", f.init);
  flag("scale_embeddings", f.scale_embeddings), flag("tie_weights", f.tie_weights);
  text("dataset", f.dataset);
  if (!f.data_file.empty()) text("data_file", f.data_file);
  text("batch_size", f.batch_size), text("seed_first", f.seed_first), text("seed_last", f.seed_last);
  text("n_seeds", f.n_seeds);
  text("grad_batches", f.grad_batches);
  rows("grad_rows", f.grad_rows, "layer");
  text("post_ratio", f.post_ratio), text("pre_ratio", f.pre_ratio);
  text("post_ratio_seeds", f.post_ratio_seeds), text("pre_ratio_seeds", f.pre_ratio_seeds);
  text("bar", f.bar), text("inverse_bar", f.inverse_bar);
  flag("post_mean_only", f.post_mean_only);
  text("post_not_growing", f.post_not_growing), text("verdict_1a", f.verdict_1a);
  text("pre_below_post", f.pre_below_post), text("pre_flat", f.pre_flat);
  flag("pre_falls", f.pre_falls);
  text("pre_change", f.pre_change), text("verdict_1b", f.verdict_1b);
  rows("depth_rows", f.depth_rows, "layers");
  flag("depth_fit", f.depth_fit);
  text("post_slope_seeds", f.post_slope_seeds), text("pre_slope_seeds", f.pre_slope_seeds);
  text("pre_top_norms", f.pre_top_norms), text("pre_top_slope", f.pre_top_slope);
  text("pre_input_norm", f.pre_input_norm), text("deepest", f.deepest);
  text("post_slope", f.post_slope), text("pre_slope", f.pre_slope);
  text("verdict_2a", f.verdict_2a), text("verdict_2b", f.verdict_2b);
  rows("hidden_rows", f.hidden_rows, "layer");
  text("post_hidden_growth", f.post_hidden_growth), text("pre_hidden_growth", f.pre_hidden_growth);
  text("sqrt_n_embd", f.sqrt_n_embd);
  flag("training", f.training);
  text("optimizer", f.optimizer), text("beta1", f.beta1), text("beta2", f.beta2);
  text("weight_decay", f.weight_decay), text("grad_clip", f.grad_clip), text("steps", f.steps);
  text("warmup_steps", f.warmup_steps), text("eval_iters", f.eval_iters);
  text("lr", f.lr), text("lr_short", f.lr_short), text("tail", f.tail);
  d.set("variant_rows", list_of(f.variant_rows, [](const ReportFindings::Variant& v) {
          MustacheData row;
          row.set("variant", v.variant);
          row.set("train_loss", v.train_loss);
          row.set("val_loss", v.val_loss);
          return row;
        }));
  flag("post_diverged", f.post_diverged);
  text("post_gap", f.post_gap), text("pre_gap", f.pre_gap), text("verdict_4", f.verdict_4);
  flag("sweep", f.sweep);
  d.set("sweep_rows", list_of(f.sweep_rows, [](const ReportFindings::SweepRow& r) {
          MustacheData row;
          row.set("lr", r.lr);
          row.set("post_no_warmup", r.post_no_warmup);
          row.set("post_warmup", r.post_warmup);
          row.set("pre_no_warmup", r.pre_no_warmup);
          row.set("gap", r.gap);
          row.set("matters", MustacheData(r.matters));
          return row;
        }));
  if (!f.first_matters.empty()) text("first_matters", f.first_matters);
  flag("has_notes", !f.notes.empty());
  std::string notes;  // "- note" lines
  for (const std::string& n : f.notes) notes += (notes.empty() ? "- " : "\n- ") + n;
  text("notes", notes);
  d.set("summary", list_of(f.summary, [](const ReportFindings::Summary& s) {
          MustacheData row;
          row.set("id", s.id);
          row.set("ours", s.ours);
          row.set("paper", s.paper);
          row.set("result", s.result);
          return row;
        }));
  return d;
}

// The report's Markdown: the template (embedded at build time) filled with the findings, as written
// (no HTML escaping: the report is Markdown).
std::string render_report(const ReportFindings& f) {
  Mustache tmpl(kCompareLnReportTemplate);
  if (!tmpl.is_valid()) throw Error("studies/compare_ln_report.md: " + tmpl.error_message());
  tmpl.set_custom_escape([](const std::string& s) { return s; });
  std::string out = tmpl.render(report_data(f));
  if (!tmpl.is_valid()) throw Error("studies/compare_ln_report.md: " + tmpl.error_message());
  return out;
}

}  // namespace

// ---- the study ----

namespace {

// The study's phases share what they measure: each is a method, and run_compare_study below
// calls them in order.
class Study {
 public:
  Study(const CompareStudy& study, std::ostream& log)
      : base(study.base),
        o(study.options),
        dir(base.output.run_dir),
        L(base.model.n_layer),
        log_(log),
        t0_(std::chrono::steady_clock::now()) {
    // The study's folder follows the run-folder rules (run_dir.h): new, empty or an old study
    // (with output.overwrite), one writer.
    check_not_in_use(dir.string());
    check_fresh_study_dir(dir.string(), base.output.overwrite);
    try {
      fs::create_directories(dir);
    } catch (const fs::filesystem_error& e) {
      throw Error("output.run_dir: cannot create " + dir.string() + " (" + e.code().message() + ")");
    }
    lock_.emplace(dir.string());
    start_fresh_study(dir.string(), base.output.overwrite);
    for (int64_t k = 0; k < o.seeds; ++k) seeds.push_back(base.train.seed + k);
    lrs = {base.optim.lr};
    for (double lr : o.lrs)
      if (std::fabs(lr - base.optim.lr) > 1e-12 * base.optim.lr) lrs.push_back(lr);
    std::sort(lrs.begin(), lrs.end());
  }

  // Phases 1-3: gradient norms per layer, the last layer's versus depth, hidden-state norms.
  void measure_at_init() {
    // 1. per-layer FFN gradient norms at initialisation, per seed
    progress("phase 1/4: FFN W2 gradient norm per layer at init, " + std::to_string(L) + " layers, " +
             std::to_string(seeds.size()) + " seeds x " + std::to_string(o.grad_batches) + " batches");
    for (int64_t seed : seeds) {
      post_grad_s.push_back(ffn_grad_norms(variant(base, NormPlacement::post, L, seed), o.grad_batches));
      pre_grad_s.push_back(ffn_grad_norms(variant(base, NormPlacement::pre, L, seed), o.grad_batches));
    }
    post_grad = stats(post_grad_s), pre_grad = stats(pre_grad_s);
    for (size_t k = 0; k < seeds.size(); ++k) {
      post_ratio_s.push_back(post_grad_s[k].back() / post_grad_s[k].front());
      pre_ratio_s.push_back(pre_grad_s[k].back() / pre_grad_s[k].front());
    }
    post_ratio = stat(post_ratio_s), pre_ratio = stat(pre_ratio_s);

    // 2. the last layer's norm versus depth (the depth of phase 1 is reused)
    std::string depth_list;
    for (int64_t d : o.depths) depth_list += (depth_list.empty() ? "" : ", ") + std::to_string(d);
    progress("phase 2/4: last layer's gradient norm versus depth (" + depth_list + ")");
    // Also Pre-LN's last hidden-state norm, what its final LayerNorm divides the gradient by: the
    // paper's 1/sqrt(L) rests on that norm growing as sqrt(L).
    post_by_seed.assign(seeds.size(), {}), pre_by_seed.assign(seeds.size(), {});
    for (int64_t d : o.depths) {
      depths.push_back(static_cast<double>(d));
      std::vector<double> post_v, pre_v, top_v;
      for (size_t k = 0; k < seeds.size(); ++k) {
        post_v.push_back(d == L
                             ? post_grad_s[k].back()
                             : ffn_grad_norms(variant(base, NormPlacement::post, d, seeds[k]), o.grad_batches).back());
        pre_v.push_back(d == L ? pre_grad_s[k].back()
                               : ffn_grad_norms(variant(base, NormPlacement::pre, d, seeds[k]), o.grad_batches).back());
        top_v.push_back(hidden_norms(variant(base, NormPlacement::pre, d, seeds[k]), 2).back());
        post_by_seed[k].push_back(post_v.back());
        pre_by_seed[k].push_back(pre_v.back());
      }
      post_last.push_back(stat(post_v));
      pre_last.push_back(stat(pre_v));
      pre_top.push_back(stat(top_v));
    }

    // 3. hidden-state norms at initialisation
    progress("phase 3/4: hidden-state norm per layer at init");
    for (int64_t seed : seeds) {
      post_hidden_s.push_back(hidden_norms(variant(base, NormPlacement::post, L, seed), o.grad_batches));
      pre_hidden_s.push_back(hidden_norms(variant(base, NormPlacement::pre, L, seed), o.grad_batches));
    }
    post_hidden = stats(post_hidden_s), pre_hidden = stats(pre_hidden_s);
  }

  // Phase 4: the training runs.
  void train_variants() {
    // 4. training: at optim.lr all four variants; at the other swept lrs Post-LN with and without
    //    warmup and Pre-LN without. Same seeds (weights and batches) for every variant.
    if (o.train_curves) {
      struct Plan {
        NormPlacement norm;
        bool warm;
        double lr;
      };
      std::vector<Plan> plan;
      for (double lr : lrs)
        for (NormPlacement norm : {NormPlacement::post, NormPlacement::pre})
          for (bool warm : {false, true})
            if (lr == base.optim.lr || !(norm == NormPlacement::pre && warm)) plan.push_back({norm, warm, lr});
      const int64_t total = static_cast<int64_t>(plan.size() * seeds.size());
      progress("phase 4/4: training, " + std::to_string(total) + " runs of " + std::to_string(base.train.steps) +
               " steps (Adam, warmup " + std::to_string(o.warmup_steps) + " steps where used)");
      int64_t done = 0;
      for (const Plan& p : plan)
        for (int64_t seed : seeds) {
          Config c = variant(base, p.norm, L, seed);
          c.optim.lr = p.lr;
          c.schedule.name = ScheduleKind::constant;
          c.schedule.warmup_steps = p.warm ? o.warmup_steps : 0;
          Run run;
          run.variant = norm_name(p.norm) + std::string("_ln_") + (p.warm ? "warmup" : "no_warmup");
          run.lr = p.lr;
          run.seed = seed;
          std::ostringstream lr_name;
          lr_name << p.lr;
          std::string name = run.variant + "_lr" + lr_name.str() + "_seed" + std::to_string(seed);
          c.output.run_dir = (dir / "runs" / name).string();
          c.output.overwrite = true;
          c.output.plot = false;
          c.output.save_best = false;
          c.train.samples = 0;
          c.train.eval_interval = c.train.steps;  // one estimate, at the end
          fs::create_directories(dir / "runs");
          std::ofstream run_log(dir / "runs" / (name + ".log"));
          TrainOptions options;
          options.out = &run_log;
          options.progress_bar = false;
          try {
            TrainResult r = train(c, options);
            run.val_loss = r.val_loss;
            run.losses = r.losses;
          } catch (const NumericalError& e) {  // a diverging run is a finding, not a failure
            notes.push_back(name + " diverged: " + e.what());
          }
          ++done;
          progress("  run " + std::to_string(done) + "/" + std::to_string(total) + ": " + name + " val " +
                   num(run.val_loss));
          runs.push_back(std::move(run));
        }
    }
  }

  void write_csvs() const {
    // ---- raw numbers as CSV (one row per seed) ----
    std::ostringstream grad_csv, depth_csv, hidden_csv, runs_csv, curve_csv;
    grad_csv << "seed,layer,post_ln,pre_ln\n";
    for (size_t k = 0; k < seeds.size(); ++k)
      for (int64_t i = 0; i < L; ++i)
        grad_csv << seeds[k] << "," << i + 1 << "," << num(post_grad_s[k][i], 8) << "," << num(pre_grad_s[k][i], 8)
                 << "\n";
    depth_csv << "layers,post_ln_last_mean,post_ln_last_sd,pre_ln_last_mean,pre_ln_last_sd\n";
    for (size_t i = 0; i < depths.size(); ++i)
      depth_csv << depths[i] << "," << num(post_last[i].mean, 8) << "," << num(post_last[i].sd, 8) << ","
                << num(pre_last[i].mean, 8) << "," << num(pre_last[i].sd, 8) << "\n";
    hidden_csv << "seed,layer,post_ln,pre_ln\n";
    for (size_t k = 0; k < seeds.size(); ++k)
      for (int64_t i = 0; i <= L; ++i)
        hidden_csv << seeds[k] << "," << i << "," << num(post_hidden_s[k][i], 8) << "," << num(pre_hidden_s[k][i], 8)
                   << "\n";
    runs_csv << "variant,lr,seed,val_loss\n";
    curve_csv << "variant,lr,seed,step,loss\n";
    for (const Run& r : runs) {
      runs_csv << r.variant << "," << r.lr << "," << r.seed << "," << num(r.val_loss, 8) << "\n";
      for (size_t s = 0; s < r.losses.size(); ++s)
        curve_csv << r.variant << "," << r.lr << "," << r.seed << "," << s << "," << num(r.losses[s], 8) << "\n";
    }
    atomic_write_file((dir / "grad_norms.csv").string(), grad_csv.str());
    atomic_write_file((dir / "depth.csv").string(), depth_csv.str());
    atomic_write_file((dir / "hidden_norms.csv").string(), hidden_csv.str());
    if (!runs.empty()) {
      atomic_write_file((dir / "runs.csv").string(), runs_csv.str());
      atomic_write_file((dir / "curves.csv").string(), curve_csv.str());
    }
  }

  void draw_images() {
    // ---- images: mean lines with the ± sd band across seeds ----
    std::vector<double> layers, layers0;
    for (int64_t i = 0; i < L; ++i) layers.push_back(static_cast<double>(i + 1));
    for (int64_t i = 0; i <= L; ++i) layers0.push_back(static_cast<double>(i));
    const std::string post_color = "#d62728", pre_color = "#1f77b4";
    const std::string seeds_note = " (mean ± sd over " + std::to_string(seeds.size()) + " seeds)";
    auto note = [&](const std::string& n) {
      if (!n.empty()) notes.push_back(n);
    };
    note(plot(band_block("p", layers, post_grad) + band_block("q", layers, pre_grad) +
                  "set title 'FFN W2 gradient norm per layer at init" + seeds_note +
                  "'\nset xlabel 'layer'\nset ylabel '||mean grad||_F'\n"
                  "plot " +
                  band_plot("p", post_color, "Post-LN") + ", " + band_plot("q", pre_color, "Pre-LN"),
              (dir / "grad_norms.png").string()));
    note(plot(band_block("p", depths, post_last) + band_block("q", depths, pre_last) +
                  "set title 'last layer FFN W2 gradient norm vs depth" + seeds_note +
                  "'\nset logscale xy\nset xlabel 'layers'\nset ylabel '||mean grad||_F'\n"
                  "plot " +
                  band_plot("p", post_color, "Post-LN") + ", " + band_plot("q", pre_color, "Pre-LN"),
              (dir / "depth.png").string()));
    note(plot(band_block("p", layers0, post_hidden) + band_block("q", layers0, pre_hidden) +
                  "set title 'hidden-state norm after each layer at init" + seeds_note +
                  "'\nset xlabel 'layer (0 = input of block 1)'\nset ylabel 'mean ||x_t||'\n"
                  "plot " +
                  band_plot("p", post_color, "Post-LN") + ", " + band_plot("q", pre_color, "Pre-LN"),
              (dir / "hidden_norms.png").string()));
    // Training at optim.lr: per variant the raw mean over seeds (faint), the smoothed mean and the
    // ± sd band of the smoothed per-seed curves.
    const int64_t window = std::max<int64_t>(1, base.train.steps / 20);
    if (!runs.empty()) {
      const std::vector<std::pair<std::string, std::string>> variants = {{"post_ln_no_warmup", post_color},
                                                                         {"post_ln_warmup", "#ff7f0e"},
                                                                         {"pre_ln_no_warmup", pre_color},
                                                                         {"pre_ln_warmup", "#2ca02c"}};
      std::string body, raw_plots, band_plots, line_plots;
      for (size_t v = 0; v < variants.size(); ++v) {
        std::vector<std::vector<double>> raw, smoothed;
        for (const Run& r : runs)
          if (r.variant == variants[v].first && r.lr == base.optim.lr && !r.losses.empty() &&
              r.losses.size() == static_cast<size_t>(base.train.steps)) {
            raw.push_back(r.losses);
            smoothed.push_back(smooth(r.losses, window));
          }
        if (raw.empty()) continue;
        std::vector<double> steps, raw_mean;
        for (size_t s = 0; s < raw[0].size(); ++s) steps.push_back(static_cast<double>(s + 1));
        for (const Stat& t : stats(raw)) raw_mean.push_back(t.mean);
        std::string n = "c" + std::to_string(v), color = variants[v].second;
        body += data_block(n + "raw", {steps, raw_mean}) + band_block(n, steps, stats(smoothed));
        raw_plots +=
            "$" + n + "raw u 1:2 w l lw 1 lc rgb '#99" + color.substr(1) + "' notitle, ";  // #AARRGGBB: 60% transparent
        band_plots +=
            "$" + n + " u 1:3:4 w filledcurves fc rgb '" + color + "' fs transparent solid 0.2 noborder notitle, ";
        line_plots += "$" + n + " u 1:2 w l lw 2.5 lc rgb '" + color + "' t '" + variants[v].first + "', ";
      }
      std::string all = raw_plots + band_plots + line_plots;
      all = all.substr(0, all.size() - 2);
      std::ostringstream title;
      title << "training loss at lr " << base.optim.lr << ": smoothed over " << window << " steps, band ± sd over "
            << seeds.size() << " seeds, raw mean faint";
      // the raw curves are drawn first, thin and translucent, under the bands and smoothed lines
      note(plot(body + "set title '" + title.str() +
                    "'\nset xlabel 'step'\nset ylabel 'loss (nats/token)'\nset key top right\n"
                    "plot " +
                    all,
                (dir / "curves.png").string()));
      // the lr sweep: final val loss versus lr
      std::string sweep_body, sweep_plots;
      const std::vector<std::pair<std::string, std::string>> swept = {
          {"post_ln_no_warmup", post_color}, {"post_ln_warmup", "#ff7f0e"}, {"pre_ln_no_warmup", pre_color}};
      for (size_t v = 0; v < swept.size(); ++v) {
        std::vector<double> x;
        std::vector<Stat> y;
        for (double lr : lrs) {
          Stat s = stat(val_of(swept[v].first, lr));
          if (s.n > 0) x.push_back(lr), y.push_back(s);
        }
        if (x.empty()) continue;
        std::string n = "s" + std::to_string(v);
        sweep_body += band_block(n, x, y);
        sweep_plots += std::string(sweep_plots.empty() ? "" : ", ") + "$" + n +
                       " u 1:2:3:4 w yerrorlines lw 2 lc rgb '" + swept[v].second + "' t '" + swept[v].first + "'";
      }
      if (!sweep_plots.empty() && lrs.size() > 1)
        note(plot(
            sweep_body + "set title 'val loss after " + std::to_string(base.train.steps) +
                " steps versus peak lr (mean ± sd over seeds)'\nset logscale x\nset xlabel 'peak learning rate'\nset ylabel 'val loss (nats/token)'\nplot " +
                sweep_plots,
            (dir / "lr_sweep.png").string()));
    }
  }

  // The report: studies/compare_ln_report.md filled from the findings, every number computed
  // from the measurements above and every verdict from its criterion.
  std::string write_report() const {
    std::string report = (dir / "report.md").string();
    atomic_write_file(report, render_report(findings()));
    progress("done: " + report);
    return report;
  }

  // What the report says, as text: the measurements, their criteria and verdicts.
  ReportFindings findings() const {
    ReportFindings f;
    const ModelConfig& m = base.model;
    auto str = [](auto v) {  // as an ostream prints it (6 significant digits)
      std::ostringstream os;
      os << v;
      return os.str();
    };
    f.layers = str(L), f.n_embd = str(m.n_embd), f.n_head = str(m.n_head), f.block_size = str(m.block_size);
    f.activation = option_name(m.activation), f.pos_encoding = option_name(m.pos_encoding);
    f.init = option_name(m.init);
    f.scale_embeddings = m.scale_embeddings, f.tie_weights = m.tie_weights;
    f.dataset = option_name(base.data.dataset);
    if (!base.data.path.empty()) f.data_file = fs::path(base.data.path).filename().string();
    f.batch_size = str(base.train.batch_size);
    f.seed_first = str(seeds.front()), f.seed_last = str(seeds.back());
    std::vector<ReportFindings::Summary>& summary = f.summary;
    auto judge = [&](const std::string& id, bool ok, const std::string& ours, const std::string& paper) {
      summary.push_back({id, ours, paper, ok ? "reproduced" : "not reproduced"});
      return verdict(ok);
    };

    // 1. gradient norms per layer; 1a and 1b judge every seed, not the mean: with 3 seeds the
    // mean can pass on one seed alone.
    f.grad_batches = str(o.grad_batches);
    for (int64_t i = 0; i < L; ++i) f.grad_rows.push_back({str(i + 1), pm(post_grad[i]), pm(pre_grad[i])});
    f.post_ratio = pm(post_ratio, 3), f.pre_ratio = pm(pre_ratio, 3);
    const double bar = 1.2;  // "grows": above 1.2; "about flat": within 1/1.2 .. 1.2
    auto per_seed = [](const std::vector<double>& v) {
      std::string s;
      for (double x : v) s += (s.empty() ? "" : ", ") + num(x, 3);
      return s;
    };
    auto count = [](const std::vector<double>& v, auto pass) {
      int64_t n = 0;
      for (double x : v) n += pass(x);
      return n;
    };
    const int64_t n_seeds = static_cast<int64_t>(seeds.size());
    f.n_seeds = str(n_seeds), f.bar = num(bar), f.inverse_bar = num(1 / bar, 3);
    f.post_ratio_seeds = per_seed(post_ratio_s), f.pre_ratio_seeds = per_seed(pre_ratio_s);
    const int64_t post_grows = count(post_ratio_s, [&](double r) { return grows(r, bar); });
    f.post_mean_only = post_ratio.mean > bar && post_grows < n_seeds;
    f.post_not_growing = str(n_seeds - post_grows);
    f.verdict_1a = judge("1a", grows_in_every_seed(post_ratio_s, bar),
                         "Post-LN last/first " + num(post_ratio.mean, 3) + ", per seed " + f.post_ratio_seeds,
                         "grows with the layer index");
    int64_t below_post = 0;
    for (size_t k = 0; k < seeds.size(); ++k) below_post += pre_ratio_s[k] < post_ratio_s[k];
    f.pre_below_post = str(below_post);
    f.pre_flat = str(count(pre_ratio_s, [&](double r) { return about_flat(r, bar); }));
    f.pre_falls = pre_ratio.mean < 1;
    f.pre_change = num(100 * (f.pre_falls ? 1 - pre_ratio.mean : pre_ratio.mean - 1), 2);
    f.verdict_1b = judge("1b", flat_in_every_seed(pre_ratio_s, post_ratio_s, bar),
                         "Pre-LN last/first " + num(pre_ratio.mean, 3) + ", per seed " + f.pre_ratio_seeds,
                         "about flat, below Post-LN's");

    // 2. the last layer versus depth, fitted as norm ~ L^s
    for (size_t i = 0; i < depths.size(); ++i)
      f.depth_rows.push_back({str(depths[i]), pm(post_last[i]), pm(pre_last[i])});
    f.depth_fit = depths.size() >= 2;
    if (f.depth_fit) {
      std::vector<double> post_m, pre_m;
      for (size_t i = 0; i < depths.size(); ++i) post_m.push_back(post_last[i].mean), pre_m.push_back(pre_last[i].mean);
      double sp = loglog_slope(depths, post_m), sq = loglog_slope(depths, pre_m);
      std::vector<double> sp_s, sq_s, top_m;
      for (size_t k = 0; k < seeds.size(); ++k)
        sp_s.push_back(loglog_slope(depths, post_by_seed[k])), sq_s.push_back(loglog_slope(depths, pre_by_seed[k]));
      for (const Stat& t : pre_top) top_m.push_back(t.mean);
      f.post_slope_seeds = pm(stat(sp_s), 3), f.pre_slope_seeds = pm(stat(sq_s), 3);
      for (size_t i = 0; i < depths.size(); ++i)
        f.pre_top_norms += (i ? ", " : "") + num(pre_top[i].mean) + " at " + str(depths[i]);
      f.pre_top_slope = num(loglog_slope(depths, top_m), 3);
      f.pre_input_norm = num(pre_hidden_at_input(pre_hidden_s), 4);
      f.deepest = str(depths.back());
      f.post_slope = num(sp, 3), f.pre_slope = num(sq, 3);
      f.verdict_2a = judge("2a", std::fabs(sp) <= 0.15, "Post-LN s = " + f.post_slope, "s = 0");
      f.verdict_2b = judge("2b", std::fabs(sq + 0.5) <= 0.15, "Pre-LN s = " + f.pre_slope, "s = -0.5");
    }

    // 3. hidden-state norms (the mechanism, no criterion)
    for (int64_t i = 0; i <= L; ++i) f.hidden_rows.push_back({str(i), pm(post_hidden[i]), pm(pre_hidden[i])});
    f.post_hidden_growth = num(post_hidden.back().mean / post_hidden[1].mean, 3);
    f.pre_hidden_growth = num(pre_hidden.back().mean / pre_hidden[1].mean, 3);
    f.sqrt_n_embd = num(std::sqrt(static_cast<double>(m.n_embd)), 3);

    // 4. training with and without warmup, and the learning-rate sweep
    f.training = !runs.empty();
    if (f.training) {
      const double lr = base.optim.lr;
      const int64_t tail = std::max<int64_t>(1, base.train.steps / 10);
      f.optimizer = option_name(base.optim.name);
      f.beta1 = str(base.optim.beta1), f.beta2 = str(base.optim.beta2), f.weight_decay = str(base.optim.weight_decay);
      f.grad_clip = base.optim.grad_clip > 0 ? num(base.optim.grad_clip) : "off";
      f.steps = str(base.train.steps), f.warmup_steps = str(o.warmup_steps), f.eval_iters = str(base.train.eval_iters);
      f.lr = str(lr), f.lr_short = num(lr), f.tail = str(tail);
      for (const char* v : {"post_ln_no_warmup", "post_ln_warmup", "pre_ln_no_warmup", "pre_ln_warmup"}) {
        std::vector<double> tails;
        for (const Run& r : runs)
          if (r.variant == v && r.lr == lr) tails.push_back(r.losses.empty() ? NAN : mean_of_last(r.losses, tail));
        f.variant_rows.push_back({v, pm(stat(tails)), pm(stat(val_of(v, lr)))});
      }
      Stat post_gap = stat(warmup_gap("post", lr)), pre_gap = stat(warmup_gap("pre", lr));
      f.post_diverged = diverged("post_ln_no_warmup", lr) > diverged("post_ln_warmup", lr);
      f.post_gap = pm(post_gap, 3), f.pre_gap = pm(pre_gap, 3);
      const bool post_worse = f.post_diverged || post_gap.mean >= 0.1;
      const bool pre_same = pre_gap.n > 0 && std::fabs(pre_gap.mean) < 0.1 && diverged("pre_ln_no_warmup", lr) == 0;
      f.verdict_4 = judge("4", post_worse && pre_same,
                          "gap Post-LN " + (f.post_diverged ? std::string("diverged") : num(post_gap.mean, 3)) +
                              ", Pre-LN " + num(pre_gap.mean, 3) + " nats",
                          "Post-LN without warmup far worse (8.45 vs ~34 BLEU); Pre-LN fine without");
      f.sweep = lrs.size() > 1;
      for (double swept : f.sweep ? lrs : std::vector<double>{}) {
        Stat gap = stat(warmup_gap("post", swept));
        bool matters = diverged("post_ln_no_warmup", swept) > diverged("post_ln_warmup", swept) || gap.mean >= 0.1;
        if (matters && f.first_matters.empty()) f.first_matters = num(swept);
        f.sweep_rows.push_back({str(swept), pm(stat(val_of("post_ln_no_warmup", swept))),
                                pm(stat(val_of("post_ln_warmup", swept))), pm(stat(val_of("pre_ln_no_warmup", swept))),
                                pm(gap, 3), matters});
      }
    }
    f.notes = notes;
    return f;
  }

 private:
  void progress(const std::string& line) const {
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    log_ << "[" << std::fixed << std::setprecision(0) << s << " s] " << line << std::endl;
    log_.unsetf(std::ios::fixed);
    log_ << std::setprecision(6);
  }
  // The val losses of one variant at one learning rate, one per seed (NaN: diverged).
  std::vector<double> val_of(const std::string& v, double lr) const {
    std::vector<double> out;
    for (const Run& r : runs)
      if (r.variant == v && r.lr == lr) out.push_back(r.val_loss);
    return out;
  }
  // Per seed: val loss without warmup minus with warmup (diverged runs give NaN and are counted).
  std::vector<double> warmup_gap(const std::string& norm, double lr) const {
    std::vector<double> a = val_of(norm + "_ln_no_warmup", lr), b = val_of(norm + "_ln_warmup", lr), d;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) d.push_back(a[i] - b[i]);
    return d;
  }
  int64_t diverged(const std::string& v, double lr) const {
    int64_t n = 0;
    for (double x : val_of(v, lr)) n += std::isnan(x);
    return n;
  }

  const Config& base;
  const CompareOptions& o;
  fs::path dir;
  const int64_t L;
  std::vector<int64_t> seeds;
  std::vector<double> lrs;         // optim.lr and the swept ones, ascending
  std::vector<std::string> notes;  // diverged runs, plotting problems
  std::ostream& log_;
  std::chrono::steady_clock::time_point t0_;
  std::optional<RunLock> lock_;  // one writer in the study's folder, for as long as it runs

  // Phases 1-3, per seed and as mean ± sd over the seeds.
  std::vector<std::vector<double>> post_grad_s, pre_grad_s;  // [seed][layer] FFN W2 gradient norm
  std::vector<Stat> post_grad, pre_grad;
  Stat post_ratio, pre_ratio;                     // last layer / first layer
  std::vector<double> post_ratio_s, pre_ratio_s;  // the same, per seed
  std::vector<double> depths;
  std::vector<Stat> post_last, pre_last, pre_top;                // per depth: last layer; Pre-LN's top stream norm
  std::vector<std::vector<double>> post_by_seed, pre_by_seed;    // [seed][depth]
  std::vector<std::vector<double>> post_hidden_s, pre_hidden_s;  // [seed][layer 0..L]
  std::vector<Stat> post_hidden, pre_hidden;
  // Phase 4.
  std::vector<Run> runs;
};

}  // namespace

std::string run_compare_study(const CompareStudy& study, std::ostream& log) {
  Study s(study, log);
  s.measure_at_init();
  s.train_variants();
  s.write_csvs();
  s.draw_images();
  return s.write_report();
}

}  // namespace sf
