// metrics.cpp: metrics.jsonl / metrics.csv and the gnuplot loss curve.
#include "train/metrics.h"

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "autograd/errors.h"
#include "autograd/json_int.h"
#include "train/atomic_file.h"

namespace sf {

using json = nlohmann::json;
namespace fs = std::filesystem;

const std::vector<std::string>& metrics_columns() {
  static const std::vector<std::string> columns = {"kind",      "step",       "time_s",     "loss",    "lr",
                                                   "grad_norm", "clipped",    "loss_scale", "skipped", "underflow",
                                                   "tok_per_s", "train_loss", "val_loss",   "val_ppl", "val_acc"};
  return columns;
}

static std::string csv_cell(const json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
  return v.dump();
}

static std::string csv_line(const json& row) {
  std::string line;
  const auto& cols = metrics_columns();
  for (size_t i = 0; i < cols.size(); ++i) {
    if (i) line += ",";
    if (row.contains(cols[i])) line += csv_cell(row[cols[i]]);
  }
  return line + "\n";
}

std::vector<json> read_metrics(const std::string& jsonl_path) {
  std::vector<json> rows;
  std::ifstream in(jsonl_path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    json row = json::parse(line, nullptr, false);  // discarded when torn by a crash
    const bool is_row = row.is_object() && row.contains("kind") && row["kind"].is_string() && row.contains("step") &&
                        json_int(row["step"], 0).has_value();
    if (is_row) rows.push_back(row);
  }
  return rows;
}

MetricsLog::MetricsLog(const std::string& run_dir, int64_t keep_before)
    : jsonl_path_((fs::path(run_dir) / "metrics.jsonl").string()),
      csv_path_((fs::path(run_dir) / "metrics.csv").string()) {
  std::string header;
  for (const auto& c : metrics_columns()) header += (header.empty() ? "" : ",") + c;
  header += "\n";
  if (keep_before >= 0) {  // rewrite both files without the rows the resumed run will redo
    std::string jsonl, csv = header;
    for (const json& row : read_metrics(jsonl_path_)) {
      if (row["step"].get<int64_t>() >= keep_before) continue;
      jsonl += row.dump() + "\n";
      csv += csv_line(row);
    }
    atomic_write_file(jsonl_path_, jsonl);
    atomic_write_file(csv_path_, csv);
  } else {
    atomic_write_file(jsonl_path_, "");
    atomic_write_file(csv_path_, header);
  }
  jsonl_.open(jsonl_path_, std::ios::app);
  csv_.open(csv_path_, std::ios::app);
  if (!jsonl_ || !csv_) throw Error(run_dir + ": cannot open the metrics files for writing");
}

void MetricsLog::write(const json& row) {
  jsonl_ << row.dump() << "\n" << std::flush;
  csv_ << csv_line(row) << std::flush;
}

// Which PNG terminal this gnuplot has: "pngcairo" (anti-aliased) or "png" (libgd); "" if none.
static std::string gnuplot_png_terminal() {
  FILE* p = ::popen("gnuplot -e 'set terminal' 2>&1", "r");
  if (!p) return "";
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  if (out.find("pngcairo") != std::string::npos) return "pngcairo";
  if (out.find(" png ") != std::string::npos) return "png";
  return "";
}

// A path as a gnuplot string: single-quoted, where a ' is written twice (a path may hold one, as
// in "it's"; unescaped, it would end the string and gnuplot would fail on the rest).
static std::string gnuplot_quoted(const std::string& path) {
  std::string q = "'";
  for (char ch : path) q += ch == '\'' ? std::string("''") : std::string(1, ch);
  return q + "'";
}

std::string render_gnuplot_png(const std::string& body, const std::string& png_path, int width, int height) {
  std::string terminal = gnuplot_png_terminal();
  if (terminal.empty()) return "no image: gnuplot (with a png terminal) is not installed (apt install gnuplot-nox)";
  std::string tmp = png_path + ".tmp.png";
  std::string script = "set terminal " + terminal + " size " + std::to_string(width) + "," + std::to_string(height) +
                       "\nset output " + gnuplot_quoted(tmp) + "\n" + body + "\nunset output\n";
  FILE* p = ::popen("gnuplot >/dev/null 2>&1", "w");
  if (!p) return "no image: could not start gnuplot";
  std::fwrite(script.data(), 1, script.size(), p);
  int rc = ::pclose(p);
  if (rc != 0 || !fs::exists(tmp)) {
    fs::remove(tmp);
    return "no image: gnuplot failed (exit " + std::to_string(rc) + ") on " + png_path;
  }
  fs::rename(tmp, png_path);
  return "";
}

std::string plot_losses(const std::string& jsonl_path, const std::string& png_path, const std::string& title) {
  std::ostringstream train, val;
  for (const json& row : read_metrics(jsonl_path)) {
    const std::string kind = row["kind"].get<std::string>();
    if (kind == "train" && row.contains("loss") && row["loss"].is_number())
      train << row["step"].dump() << " " << row["loss"].dump() << "\n";
    if (kind == "eval" && row.contains("val_loss") && row["val_loss"].is_number())
      val << row["step"].dump() << " " << row["val_loss"].dump() << "\n";
  }
  if (train.str().empty()) return "no loss plot: no training steps logged";
  std::ostringstream script;
  script << "set title " << json(title).dump() << " noenhanced\n"
         << "set xlabel 'step'\nset ylabel 'loss (nats/token)'\nset grid\nset key top right\n"
         << "$train << EOD\n"
         << train.str() << "EOD\n"
         << "$val << EOD\n"
         << (val.str().empty() ? "0 NaN\n" : val.str()) << "EOD\n"
         << "plot $train using 1:2 with lines lw 1 lc rgb '#7aa6da' title 'train (per step)', "
         << "$val using 1:2 with linespoints lw 2 pt 7 lc rgb '#c82829' title 'val'";
  std::string note = render_gnuplot_png(script.str(), png_path, 900, 520);
  return note.empty() ? "" : "no loss plot: " + note.substr(std::string("no image: ").size());
}

}  // namespace sf
