// tools/nanogpt_convert.py end to end: a scratchformer run -> nanoGPT ckpt.pt + meta.pkl -> a
// scratchformer run again (to-run), which `scratchformer eval` and `sample` accept and which gives
// the original run's numbers exactly. Needs /usr/bin/python3 with torch (Debian's
// python3-torch); skipped without it. That nanoGPT itself reads the ckpt.pt files is checked by
// tests/nn/test_parity_gpt.cpp against reference data made with nanoGPT's model.py.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tiny_run.h"
#include "train/config.h"
#include "train/train.h"

using namespace sf;
using namespace sf::test;
namespace fs = std::filesystem;

TEST_CASE("nanoGPT round trip: run to ckpt.pt and meta.pkl and back to a run that eval and sample accept") {
  if (std::system("/usr/bin/python3 -c 'import torch, numpy' >/dev/null 2>&1") != 0) {
    MESSAGE("skipped: /usr/bin/python3 cannot import torch and numpy (install python3-torch)");
    return;
  }
  const std::string exe = std::string(SF_BINARY_DIR) + "/scratchformer";
  const std::string convert = "/usr/bin/python3 " + std::string(SF_SOURCE_DIR) + "/tools/nanogpt_convert.py";
  REQUIRE(fs::exists(exe));

  Config c = tiny_config("convert_source");
  c.train.steps = 30;
  c.model.bias = false;  // like nanoGPT's Shakespeare recipe
  quiet_train(c);
  fs::path dir = fs::path(c.output.run_dir).parent_path() / "convert";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string ckpt = (dir / "ckpt.pt").string(), meta = (dir / "meta.pkl").string();
  const std::string back = (dir / "run").string();
  int code = 0;

  std::string log =
      run_command(convert + " to-nanogpt " + c.output.run_dir + " " + ckpt + " --meta " + meta + " 2>&1", code);
  INFO(log);
  REQUIRE(code == 0);
  log = run_command(convert + " to-run " + ckpt + " " + back + " --meta " + meta + " --text " + c.data.path + " 2>&1",
                    code);
  INFO(log);
  REQUIRE(code == 0);

  // The converted run's config uses the experiment's field names, with the same model.
  Config converted = load_run_config(back);
  CHECK(converted.model.n_layer == c.model.n_layer);
  CHECK(converted.model.n_head == c.model.n_head);
  CHECK(converted.model.n_embd == c.model.n_embd);
  CHECK(converted.model.block_size == c.model.block_size);
  CHECK(converted.model.bias == c.model.bias);
  CHECK(converted.model.tie_weights == c.model.tie_weights);
  CHECK(converted.data.dataset == Dataset::text);

  // eval: the same val loss, to the printed digits; sample: the same text for the same seed.
  std::string eval_a = run_command(exe + " eval " + c.output.run_dir, code);
  REQUIRE(code == 0);
  std::string eval_b = run_command(exe + " eval " + back, code);
  REQUIRE(code == 0);
  INFO(eval_a << eval_b);
  CHECK(!line_starting(eval_a, "val loss ").empty());
  CHECK(line_starting(eval_a, "val loss ") == line_starting(eval_b, "val loss "));
  const std::string sample_args = " --prompt 'the ' --max-new-tokens 60 --temperature 0.8 --seed 3";
  std::string sample_a = run_command(exe + " sample " + c.output.run_dir + sample_args, code);
  REQUIRE(code == 0);
  std::string sample_b = run_command(exe + " sample " + back + sample_args, code);
  REQUIRE(code == 0);
  CHECK(sample_a.size() > 60);
  CHECK(sample_a == sample_b);

  // A converted run has no optimizer state: resuming it is one clear error, exit code 2.
  std::string resume = run_command(exe + " train --resume " + back + " 2>&1", code);
  CHECK(code == 2);
  CHECK(resume.find("holds weights only") != std::string::npos);
  // The converter refuses to write over a run, with one line and exit code 2.
  std::string again = run_command(convert + " to-run " + ckpt + " " + back + " --meta " + meta + " 2>&1", code);
  CHECK(code == 2);
  CHECK(again.find("already holds a run") != std::string::npos);
}
