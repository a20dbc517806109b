#include "report.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>

namespace tiledispatch::profiler {
namespace {

std::string fixed(double value, int digits) {
  if (std::isnan(value)) return "";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", digits, value);
  return buffer;
}

std::string scientific(double value) {
  if (std::isnan(value)) return "";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.3e", value);
  return buffer;
}

std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
          out += buffer;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.6g", value);
  return buffer;
}

// One record as ordered (column, CSV text, JSON text) triples, so CSV and JSON cannot drift apart.
struct Field {
  const char* column;
  std::string csv;
  std::string json;
};

std::vector<Field> fields_of(const Result& r) {
  const ConvProblem& p = r.problem;
  auto integer = [](int64_t v) { return Field{"", std::to_string(v), std::to_string(v)}; };
  auto named = [](const char* column, Field f) {
    f.column = column;
    return f;
  };
  auto text = [](const char* column, const std::string& v) { return Field{column, v, json_string(v)}; };
  auto real = [](const char* column, double v, int digits) { return Field{column, fixed(v, digits), json_number(v)}; };
  const std::string verified = r.verified ? (*r.verified ? "1" : "0") : "";
  return {
      // The upstream sweep's result schema, in its order.
      text("kernel", r.kernel),
      named("problem_idx", integer(static_cast<int64_t>(r.problem_index))),
      named("N", integer(p.N)),
      named("C", integer(p.C)),
      named("K", integer(p.K)),
      named("G", integer(p.G)),
      named("Hi", integer(p.input[1])),
      named("Wi", integer(p.input[2])),
      named("Y", integer(p.filter[1])),
      named("X", integer(p.filter[2])),
      named("stride_h", integer(p.stride[1])),
      named("stride_w", integer(p.stride[2])),
      named("pad_h", integer(p.left_pad[1])),
      named("pad_w", integer(p.left_pad[2])),
      real("latency_ms", r.latency_ms, 5),
      real("tflops", r.tflops, 3),
      Field{"non_zero", r.non_zero ? "1" : "0", r.non_zero ? "true" : "false"},
      // Ours.
      text("direction", std::string(tiledispatch::to_token(r.direction))),
      text("dtype", std::string(tiledispatch::to_token(r.dtype))),
      text("instance_string", r.instance_string),
      Field{"verified", verified, r.verified ? (*r.verified ? "true" : "false") : "null"},
      text("problem_name", r.problem_name),
      text("status", std::string(to_token(r.status))),
      text("reason", r.reason),
      named("split_k", integer(r.split_k)),
      real("gb_per_s", r.gb_per_s, 2),
      Field{"rel_l2_error", scientific(r.rel_l2_error), json_number(r.rel_l2_error)},
      named("ndim", integer(p.ndim_spatial)),
      named("Di", integer(p.input[0])),
      named("Z", integer(p.filter[0])),
      named("stride_d", integer(p.stride[0])),
      named("pad_d", integer(p.left_pad[0])),
      named("dilation_d", integer(p.dilation[0])),
      named("dilation_h", integer(p.dilation[1])),
      named("dilation_w", integer(p.dilation[2])),
      named("right_pad_d", integer(p.right_pad[0])),
      named("right_pad_h", integer(p.right_pad[1])),
      named("right_pad_w", integer(p.right_pad[2])),
  };
}

void write_atomically(const std::string& path, const std::function<void(std::ostream&)>& body) {
  const std::string temp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write '" + temp + "'");
    body(out);
    out.flush();
    if (!out) {
      std::remove(temp.c_str());
      throw std::runtime_error("error while writing '" + temp + "'");
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    throw std::runtime_error("cannot rename '" + temp + "' to '" + path + "'");
  }
}

}  // namespace

std::string_view to_token(Status status) {
  switch (status) {
    case Status::kValid: return "valid";
    case Status::kFailed: return "failed";
    case Status::kNotSupported: return "not_supported";
  }
  return "?";
}

std::string format_result_line(const Result& r) {
  switch (r.status) {
    case Status::kValid: {
      auto or_zero = [](double v) { return std::isnan(v) ? 0.0 : v; };
      return "[Valid] Perf: " + fixed(or_zero(r.latency_ms), 5) + " ms, " + fixed(or_zero(r.tflops), 3) +
             " TFlops, " + fixed(or_zero(r.gb_per_s), 2) + " GB/s, " + r.instance_string + ", SplitK " +
             std::to_string(r.split_k);
    }
    case Status::kNotSupported: return "[Not supported] " + r.kernel + ": " + r.reason;
    case Status::kFailed:
      return "[Failed] " + r.kernel + (r.split_k != 1 ? " (SplitK " + std::to_string(r.split_k) + ")" : "") + ": " +
             r.reason;
  }
  return {};
}

void print_best(const std::vector<Result>& results, std::ostream& out) {
  const Result* best = nullptr;
  for (const auto& r : results) {
    if (r.status != Status::kValid) continue;
    // Untimed runs (--time 0) have no latency: the first valid one stands, as in CK.
    if (best == nullptr || (!std::isnan(r.latency_ms) && (std::isnan(best->latency_ms) || r.latency_ms < best->latency_ms))) {
      best = &r;
    }
  }
  out << "Best configuration parameters:\n";
  if (best == nullptr) {
    out << "name: none (no instance ran successfully)\n";
    return;
  }
  out << "name: " << best->instance_string << '\n'
      << "kernel: " << best->kernel << '\n'
      << "avg_time: " << fixed(std::isnan(best->latency_ms) ? 0.0 : best->latency_ms, 5) << '\n'
      << "tflops: " << fixed(std::isnan(best->tflops) ? 0.0 : best->tflops, 3) << '\n'
      << "GB/s: " << fixed(std::isnan(best->gb_per_s) ? 0.0 : best->gb_per_s, 2) << '\n'
      << "SplitK: " << best->split_k << '\n';
}

void write_csv(const std::string& path, const std::vector<Result>& results) {
  write_atomically(path, [&](std::ostream& out) {
    const auto header = fields_of(Result{});
    for (size_t i = 0; i < header.size(); ++i) out << (i ? "," : "") << header[i].column;
    out << '\n';
    for (const auto& r : results) {
      const auto fields = fields_of(r);
      for (size_t i = 0; i < fields.size(); ++i) out << (i ? "," : "") << csv_cell(fields[i].csv);
      out << '\n';
    }
  });
}

void write_json(const std::string& path, const std::vector<Result>& results) {
  write_atomically(path, [&](std::ostream& out) {
    out << "{\"results\": [";
    for (size_t n = 0; n < results.size(); ++n) {
      const auto fields = fields_of(results[n]);
      out << (n ? ",\n  {" : "\n  {");
      for (size_t i = 0; i < fields.size(); ++i) {
        out << (i ? ", " : "") << json_string(fields[i].column) << ": " << fields[i].json;
      }
      out << '}';
    }
    out << "\n]}\n";
  });
}

}  // namespace tiledispatch::profiler
