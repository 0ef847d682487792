// metrics.h: the numbers of a run, one row per logged event, in two files of the run directory:
// metrics.jsonl (one JSON object per line, every field) and metrics.csv (fixed columns, for a
// spreadsheet or gnuplot). Rows are of kind "train" (one per step) or "eval". JSON has no NaN or
// Infinity: such a value (a perplexity exp(loss) past 1e308, a diverged estimate) is written as
// null (nlohmann::json's rule), an empty cell in the CSV, and readers take null as "no value".
#pragma once
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sf {

// The columns of metrics.csv, in order; a row without a field leaves its cell empty.
const std::vector<std::string>& metrics_columns();

class MetricsLog {
 public:
  // Opens (appends to) run_dir/metrics.jsonl and run_dir/metrics.csv. With keep_before >= 0, rows
  // with step >= keep_before are dropped first (a resumed run redoes those steps).
  MetricsLog(const std::string& run_dir, int64_t keep_before = -1);
  // Appends one row (must hold "kind" and "step"); flushed at once, so a crash loses nothing.
  void write(const nlohmann::json& row);
  const std::string& jsonl_path() const { return jsonl_path_; }

 private:
  std::string jsonl_path_, csv_path_;
  std::ofstream jsonl_, csv_;
};

// Every row of a metrics.jsonl file: a JSON object with a string "kind" and an integer "step" >= 0,
// as MetricsLog writes them. Anything else on a line (a line torn by a crash, a hand edit such as
// "step": "5" or 1e30) is skipped, so the readers below can rely on both fields.
std::vector<nlohmann::json> read_metrics(const std::string& jsonl_path);

// Renders a gnuplot script body (data blocks, labels, plot command) to png_path, written via a
// temporary file and a rename. Returns "" on success, else a one-line note why there is no image.
std::string render_gnuplot_png(const std::string& body, const std::string& png_path, int width, int height);

// Draws the train and val loss curves of metrics.jsonl into png_path with gnuplot. Returns an
// empty string on success, else a one-line note saying why there is no picture.
std::string plot_losses(const std::string& jsonl_path, const std::string& png_path, const std::string& title);

}  // namespace sf
