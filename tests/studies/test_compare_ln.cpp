// The Pre-LN / Post-LN study in quick mode on tiny models: it must write every finding with its
// criterion and a verdict that follows from its own numbers (recomputed here from the CSVs), and
// in the paper's setting (unit-scale token vectors, Post-LN without a final LayerNorm) Post-LN's
// last/first FFN gradient ratio must exceed 1.2 and Pre-LN's (Xiong et al., 2020, Figure 3).
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/errors.h"
#include "studies/compare_ln.h"
#include "tests/sanitized.h"
#include "train/run_dir.h"

namespace fs = std::filesystem;
using namespace sf;
using sf::test::kSanitized;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// grad_norms.csv rows "seed,layer,post_ln,pre_ln" -> per seed, the two columns.
void read_grad_norms(const fs::path& csv, std::map<int, std::vector<double>>& post,
                     std::map<int, std::vector<double>>& pre) {
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    int seed, layer;
    double a, b;
    REQUIRE(std::sscanf(line.c_str(), "%d,%d,%lf,%lf", &seed, &layer, &a, &b) == 4);
    post[seed].push_back(a);
    pre[seed].push_back(b);
  }
}

// last/first, one per seed.
std::vector<double> ratios(const std::map<int, std::vector<double>>& by_seed) {
  std::vector<double> r;
  for (const auto& [seed, v] : by_seed) r.push_back(v.back() / v.front());
  return r;
}

// The mean over seeds of last/first.
double mean_ratio(const std::map<int, std::vector<double>>& by_seed) {
  double s = 0;
  for (double r : ratios(by_seed)) s += r;
  return s / static_cast<double>(by_seed.size());
}

// The verdict the report gives finding `id` ("1a", "2b", ...).
std::string verdict_of(const std::string& report, const std::string& id) {
  size_t at = report.find("**Finding " + id + ".**");
  REQUIRE(at != std::string::npos);
  size_t end = report.find('\n', at);
  std::string line = report.substr(at, end - at);
  CHECK(line.find("Criterion: ") != std::string::npos);
  if (line.find("**not reproduced**") != std::string::npos) return "not reproduced";
  if (line.find("**reproduced**") != std::string::npos) return "reproduced";
  return "";
}

// A tiny model in the paper's setting (the study config's own model options), quick mode.
std::vector<std::string> tiny(const fs::path& dir, int steps) {
  return {"model.n_layer=4",
          "model.n_embd=32",
          "model.n_head=2",
          "model.block_size=16",
          "data.dataset=\"synthetic\"",
          "data.path=\"\"",
          "data.corpus_tokens=20000",
          "data.corpus_val_tokens=2000",
          "train.batch_size=8",
          "train.steps=" + std::to_string(steps),
          "train.eval_iters=2",
          "output.run_dir=\"" + dir.string() + "\"",
          "compare.quick=true",
          "compare.depths=[2, 4]",
          "compare.warmup_steps=" + std::to_string(steps / 3)};
}

}  // namespace

TEST_CASE(
    "compare_ln: quick study prints every finding with its criterion and a verdict that follows from its numbers") {
  fs::path dir = fs::temp_directory_path() / "sf_test_compare_ln";
  fs::remove_all(dir);
  CompareStudy study = load_compare_study("configs/compare_ln.json", tiny(dir, 24));
  CHECK(study.options.seeds == 2);  // quick mode
  CHECK(study.options.lrs.empty());
  std::ostringstream log;
  std::string report_path = run_compare_study(study, log);
  for (const char* phase : {"phase 1/4", "phase 2/4", "phase 3/4", "phase 4/4"})
    CHECK(log.str().find(phase) != std::string::npos);

  std::string report = read_text(report_path);
  for (const char* f : {"grad_norms.csv", "depth.csv", "hidden_norms.csv", "runs.csv", "curves.csv"})
    CHECK(fs::exists(dir / f));
  CHECK(report.find("## Our numbers beside the paper's") != std::string::npos);

  // Findings 1a, 1b: recompute the verdicts from the per-seed CSV.
  std::map<int, std::vector<double>> post, pre;
  read_grad_norms(dir / "grad_norms.csv", post, pre);
  REQUIRE(post.size() == 2);
  for (const auto& [seed, v] : post) REQUIRE(v.size() == 4);
  // 1a: Post-LN's ratio above 1.2 in every seed; 1b: Pre-LN's within 1/1.2 .. 1.2 and below
  // Post-LN's in every seed (not the means: with few seeds one seed can carry a mean).
  std::vector<double> post_r = ratios(post), pre_r = ratios(pre);
  bool grows = true, flat = true;
  for (size_t k = 0; k < post_r.size(); ++k) {
    grows = grows && post_r[k] > 1.2;
    flat = flat && pre_r[k] >= 1 / 1.2 && pre_r[k] <= 1.2 && pre_r[k] < post_r[k];
  }
  CHECK(verdict_of(report, "1a") == (grows ? "reproduced" : "not reproduced"));
  CHECK(verdict_of(report, "1b") == (flat ? "reproduced" : "not reproduced"));
  CHECK(report.find("Criterion: ratio > 1.2 in every seed.") != std::string::npos);
  CHECK(report.find("Criterion: every seed's Pre-LN ratio between 1/1.2 = 0.833 and 1.2") != std::string::npos);
  for (const char* id : {"2a", "2b", "4"}) CHECK(verdict_of(report, id) != "");

  // Finding 4: the val losses per seed in runs.csv give the gaps the verdict rests on.
  std::map<std::string, std::vector<double>> val;
  std::ifstream csv(dir / "runs.csv");
  std::string line;
  std::getline(csv, line);
  while (std::getline(csv, line)) {
    std::stringstream row(line);
    std::string variant, lr, seed, loss;
    std::getline(row, variant, ',');
    std::getline(row, lr, ',');
    std::getline(row, seed, ',');
    std::getline(row, loss, ',');
    val[variant].push_back(std::stod(loss));
  }
  REQUIRE(val.size() == 4);
  for (const auto& [v, losses] : val) REQUIRE(losses.size() == 2);
  auto gap = [&](const std::string& norm) {
    return ((val[norm + "_ln_no_warmup"][0] - val[norm + "_ln_warmup"][0]) +
            (val[norm + "_ln_no_warmup"][1] - val[norm + "_ln_warmup"][1])) /
           2;
  };
  bool reproduced = gap("post") >= 0.1 && std::fabs(gap("pre")) < 0.1;
  CHECK(verdict_of(report, "4") == (reproduced ? "reproduced" : "not reproduced"));
  fs::remove_all(dir);
}

TEST_CASE("compare_ln: in the paper's setting Post-LN's FFN gradients grow toward the output and Pre-LN's do not") {
  fs::path dir = fs::temp_directory_path() / "sf_test_compare_ln_paper";
  fs::remove_all(dir);
  // The study's own model (6 layers, d 128, T 64, batch 16) at init only, on the synthetic corpus.
  std::vector<std::string> o = {
      "data.dataset=\"synthetic\"", "data.path=\"\"",     "output.run_dir=\"" + dir.string() + "\"",
      "compare.quick=true",         "compare.depths=[6]", "compare.train_curves=false"};
  // Under the sanitizers one batch of 2 per measurement instead of quick mode's 4 of 16: the same
  // model and study code, which ASan and UBSan check; the ratios need the batches to be measured
  // and are checked in Release (the full setting took 194 s under ASan).
  if (kSanitized) {
    o.push_back("train.batch_size=2");
    o.push_back("compare.grad_batches=1");
  }
  std::ostringstream log;
  run_compare_study(load_compare_study("configs/compare_ln.json", o), log);
  std::map<int, std::vector<double>> post, pre;
  read_grad_norms(dir / "grad_norms.csv", post, pre);
  if (kSanitized) {  // what the short run can show: a finite norm per layer and seed, the report
    CHECK(fs::exists(dir / "report.md"));
    REQUIRE(post.size() == 2);  // quick mode's 2 seeds
    REQUIRE(pre.size() == 2);
    for (const auto* by_seed : {&post, &pre})
      for (const auto& [seed, v] : *by_seed) {
        REQUIRE(v.size() == 6);
        for (double norm : v) CHECK((std::isfinite(norm) && norm > 0));
      }
  } else {
    double post_ratio = mean_ratio(post), pre_ratio = mean_ratio(pre);
    CAPTURE(post_ratio);
    CAPTURE(pre_ratio);
    CHECK(post_ratio > 1.2);
    CHECK(pre_ratio < post_ratio);
    for (double r : ratios(pre)) CHECK(r < 1.2);  // Pre-LN's does not grow (it may shrink: finding 1b)
  }
  fs::remove_all(dir);
}

TEST_CASE("compare_ln: findings 1a and 1b judge every seed, so one seed cannot carry the mean") {
  // The committed study's per-seed ratios (lessons/prenorm_study.md): Post-LN's mean 1.5 passes
  // 1.2 on the strength of one seed; Pre-LN's 0.67-0.72 are below Post-LN's but not flat.
  std::vector<double> post = {1.193, 1.307, 2.006}, pre = {0.676, 0.666, 0.717};
  CHECK_FALSE(grows_in_every_seed(post, 1.2));
  CHECK(grows_in_every_seed({1.25, 1.307, 2.006}, 1.2));
  CHECK_FALSE(grows_in_every_seed({}, 1.2));
  CHECK_FALSE(flat_in_every_seed(pre, post, 1.2));                       // falls by 31 %
  CHECK(flat_in_every_seed({0.9, 1.05, 1.1}, post, 1.2));                // flat and below Post-LN's
  CHECK_FALSE(flat_in_every_seed({0.9, 1.05, 1.25}, {2, 2, 2}, 1.2));    // one seed rises past 1.2
  CHECK_FALSE(flat_in_every_seed({0.9, 1.05, 1.1}, {2, 2, 1.05}, 1.2));  // one seed not below Post-LN's
  CHECK_FALSE(flat_in_every_seed({0.9}, {2, 2}, 1.2));
}

TEST_CASE("compare_ln: the training plot's labels are plain text and the curves are smoothed with a band") {
  // gnuplot's enhanced text would print post_ln_no_warmup as post with subscripts; the study sets
  // noenhanced. Checked on the gnuplot script kept beside the image.
  fs::path dir = fs::temp_directory_path() / "sf_test_compare_ln_plot";
  fs::remove_all(dir);
  std::ostringstream log;
  std::vector<std::string> o = tiny(dir, 12);
  o.push_back("compare.depths=[4]");
  run_compare_study(load_compare_study("configs/compare_ln.json", o), log);
  std::string report = read_text(dir / "report.md");
  CHECK(report.find("![](curves.png)") != std::string::npos);
  if (report.find("no image: gnuplot") == std::string::npos) CHECK(fs::exists(dir / "curves.png"));
  std::string script = read_text(dir / "curves.gp");  // the script the image was drawn from
  CHECK(script.find("set termoption noenhanced") != std::string::npos);
  CHECK(script.find("t 'post_ln_no_warmup'") != std::string::npos);
  CHECK(script.find("filledcurves") != std::string::npos);  // the band across seeds
  CHECK(script.find("notitle") != std::string::npos);       // the faint raw curves, unlabelled
  CHECK(script.find("smoothed over") != std::string::npos);
  fs::remove_all(dir);
}

// The folder contents as "name" lines, sorted (subfolders as "name/").
static std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    names.push_back(fs::relative(e.path(), dir).string() + (e.is_directory() ? "/" : ""));
  std::sort(names.begin(), names.end());
  return names;
}

// compare used to write its report, CSVs and runs/ into any existing folder, without a lock.
TEST_CASE("compare_ln: the study folder follows the run-folder rules: foreign folders refused, one writer") {
  fs::path dir = fs::temp_directory_path() / "sf_test_compare_ln_folder";
  fs::remove_all(dir);
  std::vector<std::string> o = tiny(dir, 6);
  o.push_back("compare.depths=[2]");
  o.push_back("compare.train_curves=false");
  auto study = [&](bool overwrite) {
    std::vector<std::string> with = o;
    with.push_back(std::string("output.overwrite=") + (overwrite ? "true" : "false"));
    std::ostringstream log;
    return run_compare_study(load_compare_study("configs/compare_ln.json", with), log);
  };

  // A folder of the user's (even with overwrite): refused, nothing touched.
  fs::create_directories(dir / "runs");
  std::ofstream(dir / "notes.txt") << "precious\n";
  std::ofstream(dir / "runs" / "mine.log") << "keep\n";
  const std::vector<std::string> before = listing(dir);
  for (bool overwrite : {false, true})
    CHECK_THROWS_WITH_AS(study(overwrite), doctest::Contains("is not empty and is not a compare study"), ConfigError);
  CHECK(listing(dir) == before);
  CHECK(read_text(dir / "notes.txt") == "precious\n");

  // A training run's folder is not a study either.
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "run.json") << R"({"format": "scratchformer run", "version": 1, "run_id": "x"})";
  CHECK_THROWS_WITH_AS(study(true), doctest::Contains("is not a compare study"), ConfigError);

  // A new folder; then the same study again: refused without overwrite, replaced with it.
  fs::remove_all(dir);
  study(false);
  CHECK(fs::exists(dir / "report.md"));
  CHECK_THROWS_WITH_AS(study(false), doctest::Contains("already holds a compare study"), ConfigError);
  study(true);
  CHECK(fs::exists(dir / "report.md"));

  // A study whose folder another process holds (the lock is per open file, so one here does).
  {
    RunLock other(dir.string());
    CHECK_THROWS_WITH_AS(study(true), doctest::Contains("is in use by another scratchformer process"), Error);
  }
  fs::remove_all(dir);
}

TEST_CASE("compare_ln: bad study settings are one clear error naming the key") {
  fs::path bad = fs::temp_directory_path() / "sf_test_bad_study.json";
  auto write = [&](const std::string& text) { std::ofstream(bad) << text; };
  write(R"({"model": {"n_layer": 2}, "compare": {"grad_batches": 0}})");
  CHECK_THROWS_WITH_AS(load_compare_study(bad.string()), doctest::Contains("compare.grad_batches: must be >= 1, got 0"),
                       ConfigError);
  write(R"({"compare": {"depth": [2]}})");
  CHECK_THROWS_WITH_AS(load_compare_study(bad.string()), doctest::Contains("compare.depth: unknown key"), ConfigError);
  write(R"({"compare": {"depths": [0]}})");
  CHECK_THROWS_WITH_AS(load_compare_study(bad.string()), doctest::Contains("compare.depths: every depth"), ConfigError);
  write(R"({"compare": {"seeds": 0}})");
  CHECK_THROWS_WITH_AS(load_compare_study(bad.string()),
                       doctest::Contains("compare.seeds: must be from 1 to 100, got 0"), ConfigError);
  write(R"({"compare": {"lrs": [1e-3, -1]}})");
  CHECK_THROWS_WITH_AS(load_compare_study(bad.string()),
                       doctest::Contains("compare.lrs: every learning rate must be a number > 0"), ConfigError);
  write(R"({"compare": {"lrs": [1e-3, 1e39]}})");
  CHECK_THROWS_WITH_AS(
      load_compare_study(bad.string()),
      doctest::Contains("compare.lrs: every learning rate must be a number > 0 and at most 3.4028234663852886e+38 (the "
                        "largest float32), got 1e+39"),
      ConfigError);
  write(R"({"compare": {"quick": 1}})");
  CHECK_THROWS_WITH_AS(load_compare_study(bad.string()), doctest::Contains("compare.quick: wrong type"), ConfigError);
  CHECK_THROWS_WITH_AS(load_compare_study("configs/no_such_study.json"), doctest::Contains("not found"), ConfigError);
  fs::remove(bad);
}

TEST_CASE("compare_ln: the study numbers quoted by lesson prenorm (both texts) are in the report") {
  // Between <!-- study numbers --> and <!-- /study numbers -->, every number must occur in
  // lessons/prenorm_study.md, the report `scratchformer compare configs/compare_ln.json` wrote.
  std::string report = read_text("lessons/prenorm_study.md");
  REQUIRE(report.find("## Our numbers beside the paper's") != std::string::npos);
  auto is_num = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; };
  std::vector<std::string> report_numbers;
  for (size_t i = 0; i < report.size();) {
    if (!std::isdigit(static_cast<unsigned char>(report[i]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < report.size() && is_num(report[j])) ++j;
    std::string number = report.substr(i, j - i);
    while (!number.empty() && number.back() == '.') number.pop_back();  // a full stop
    report_numbers.push_back(number);
    i = j;
  }
  for (const char* doc : {"lessons/prenorm.md", "lessons/zh/prenorm.md"}) {
    CAPTURE(doc);
    std::string text = read_text(doc);
    // Every marked region (a text may quote the study in more than one place).
    std::string quoted;
    for (size_t from = 0;;) {
      size_t a = text.find("<!-- study numbers -->", from);
      if (a == std::string::npos) break;
      size_t b = text.find("<!-- /study numbers -->", a);
      REQUIRE(b != std::string::npos);
      quoted += text.substr(a, b - a) + "\n";
      from = b;
    }
    REQUIRE(!quoted.empty());
    int n = 0;
    for (size_t i = 0; i < quoted.size();) {
      if (!std::isdigit(static_cast<unsigned char>(quoted[i])) ||
          (i > 0 && std::isalpha(static_cast<unsigned char>(quoted[i - 1])))) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < quoted.size() && is_num(quoted[j])) ++j;
      std::string number = quoted.substr(i, j - i);
      while (!number.empty() && number.back() == '.') number.pop_back();  // a full stop
      CAPTURE(number);
      CHECK(std::find(report_numbers.begin(), report_numbers.end(), number) != report_numbers.end());
      ++n;
      i = j;
    }
    CHECK(n >= 10);
  }
}
