// The Pre-LN / Post-LN study in miniature: tiny model, few batches. It must produce the report
// and show finding 1's direction: the last/first layer FFN gradient-norm ratio is larger for
// Post-LN than for Pre-LN (Xiong et al., 2020).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/errors.h"
#include "experiments/compare_ln.h"

namespace fs = std::filesystem;
using namespace sf;

namespace {

// grad_norms.csv rows "layer,post_ln,pre_ln" -> the two columns.
void read_grad_norms(const fs::path& csv, std::vector<double>& post, std::vector<double>& pre) {
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    double layer, a, b;
    REQUIRE(std::sscanf(line.c_str(), "%lf,%lf,%lf", &layer, &a, &b) == 3);
    post.push_back(a);
    pre.push_back(b);
  }
}

}  // namespace

TEST_CASE("compare_ln: a tiny study writes its report and Post-LN's gradient ratio exceeds Pre-LN's") {
  fs::path dir = fs::temp_directory_path() / "sf_test_compare_ln";
  fs::remove_all(dir);
  std::vector<std::string> overrides = {
      "model.n_layer=4", "model.n_embd=32", "model.n_head=2", "model.block_size=16",
      "train.batch_size=8", "train.steps=30", "train.eval_interval=30", "train.eval_iters=2",
      "data.corpus_tokens=20000", "data.corpus_val_tokens=2000", "output.run_dir=\"" + dir.string() + "\"",
      "compare.grad_batches=8", "compare.depths=[2, 4]", "compare.warmup_steps=10"};
  CompareStudy study = load_compare_study("configs/compare_ln.json", overrides);
  std::ostringstream log;
  std::string report = run_compare_study(study, log);

  CHECK(fs::exists(report));
  for (const char* f : {"grad_norms.csv", "depth.csv", "hidden_norms.csv", "curves.csv"}) CHECK(fs::exists(dir / f));
  std::ifstream in(report);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str().find("## 4. Training") != std::string::npos);

  std::vector<double> post, pre;
  read_grad_norms(dir / "grad_norms.csv", post, pre);
  REQUIRE(post.size() == 4);
  REQUIRE(pre.size() == 4);
  CHECK(post.back() / post.front() > pre.back() / pre.front());
  fs::remove_all(dir);
}

TEST_CASE("compare_ln: the training table's loss is the mean of the last 10 percent of steps") {
  fs::path dir = fs::temp_directory_path() / "sf_test_compare_ln_tail";
  fs::remove_all(dir);
  std::vector<std::string> overrides = {
      "model.n_layer=2", "model.n_embd=32", "model.n_head=2", "model.block_size=16",
      "train.batch_size=8", "train.steps=40", "train.eval_interval=40", "train.eval_iters=1",
      "data.corpus_tokens=20000", "data.corpus_val_tokens=2000", "output.run_dir=\"" + dir.string() + "\"",
      "compare.grad_batches=1", "compare.depths=[2]", "compare.warmup_steps=10"};
  std::ostringstream log;
  std::string report = run_compare_study(load_compare_study("configs/compare_ln.json", overrides), log);
  std::ifstream in(report);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str().find("| variant | train loss (mean of last 4 steps) | val loss |") != std::string::npos);

  // curves.csv: every step's loss per variant; the table row: the mean of the last 4.
  std::map<std::string, std::vector<double>> curves;
  std::ifstream csv(dir / "curves.csv");
  std::string line;
  std::getline(csv, line);  // header
  while (std::getline(csv, line)) {
    size_t a = line.find(','), b = line.find(',', a + 1);
    curves[line.substr(0, a)].push_back(std::stod(line.substr(b + 1)));
  }
  REQUIRE(curves.size() == 4);
  for (const auto& [name, losses] : curves) {
    CAPTURE(name);
    REQUIRE(losses.size() == 40);
    double mean = (losses[36] + losses[37] + losses[38] + losses[39]) / 4;
    std::string row = "| " + name + " | ";
    size_t at = text.str().find(row);
    REQUIRE(at != std::string::npos);
    double shown = std::stod(text.str().substr(at + row.size()));
    CHECK(std::fabs(shown - mean) <= 5e-4 * mean);  // the report prints 4 significant digits
  }
  fs::remove_all(dir);
}

TEST_CASE("compare_ln: bad study settings are one clear error naming the key") {
  fs::path bad = fs::temp_directory_path() / "sf_test_bad_study.json";
  auto write = [&](const std::string& text) { std::ofstream(bad) << text; };
  write(R"({"model": {"n_layer": 2}, "compare": {"grad_batches": 0}})");
  CHECK_THROWS_WITH_AS(load_compare_study(bad.string()), doctest::Contains("compare.grad_batches: must be >= 1, got 0"), ConfigError);
  write(R"({"compare": {"depth": [2]}})");
  CHECK_THROWS_WITH_AS(load_compare_study(bad.string()), doctest::Contains("compare.depth: unknown key"), ConfigError);
  write(R"({"compare": {"depths": [0]}})");
  CHECK_THROWS_WITH_AS(load_compare_study(bad.string()), doctest::Contains("compare.depths: every depth"), ConfigError);
  CHECK_THROWS_WITH_AS(load_compare_study("configs/no_such_study.json"), doctest::Contains("not found"), ConfigError);
  fs::remove(bad);
}
