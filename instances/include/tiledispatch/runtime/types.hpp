// Enumerations of the configuration model and their CK spellings (ck_conventions §1, §3).
// The Python side (generators/enums.py) carries the same enumerators and tokens; a CPU test compares them.
#pragma once

#include <optional>
#include <string_view>

namespace tiledispatch {

enum class ConvDirection { kFwd, kBwdData, kBwdWeight };
enum class DataType { kFp16, kBf16, kFp32 };
enum class Pipeline {
  kBasicV1, kBasicV2, kMem, kCompV3, kCompV4, kCompV5, kCompV6, kBasicAsyncV1, kCompAsync, kWavelet
};
enum class Scheduler { kIntrawave, kInterwave };
enum class Epilogue { kCShuffle, kDefault };
enum class ConvSpecialization { kDefault, kFilter1x1Pad0, kFilter1x1Stride1Pad0, kFilter3x3 };
// Values are the ones CK prints in a stream-K instance string.
enum class StreamKReduction { kLinear = 1, kTree = 2 };
enum class KernelFamily { kImplicitGemm, kDepthwise, kStreamK };

constexpr std::string_view to_token(ConvDirection d) {
  switch (d) {
    case ConvDirection::kFwd: return "fwd";
    case ConvDirection::kBwdData: return "bwd_data";
    case ConvDirection::kBwdWeight: return "bwd_weight";
  }
  return "?";
}

constexpr std::string_view to_token(DataType t) {
  switch (t) {
    case DataType::kFp16: return "fp16";
    case DataType::kBf16: return "bf16";
    case DataType::kFp32: return "fp32";
  }
  return "?";
}

constexpr std::string_view to_token(Pipeline p) {
  switch (p) {
    case Pipeline::kBasicV1: return "BASIC_V1";
    case Pipeline::kBasicV2: return "BASIC_V2";
    case Pipeline::kMem: return "MEMORY";
    case Pipeline::kCompV3: return "COMPUTE_V3";
    case Pipeline::kCompV4: return "COMPUTE_V4";
    case Pipeline::kCompV5: return "COMPUTE_V5";
    case Pipeline::kCompV6: return "COMPUTE_V6";
    case Pipeline::kBasicAsyncV1: return "BASIC_ASYNC_V1";
    case Pipeline::kCompAsync: return "COMPUTE_ASYNC";
    case Pipeline::kWavelet: return "WAVELET";
  }
  return "?";
}

constexpr std::string_view to_token(Scheduler s) {
  return s == Scheduler::kIntrawave ? "Intrawave" : "Interwave";
}

constexpr std::string_view to_token(Epilogue e) {
  return e == Epilogue::kCShuffle ? "cshuffle" : "default";
}

constexpr std::string_view to_token(ConvSpecialization s) {
  switch (s) {
    case ConvSpecialization::kDefault: return "Default";
    case ConvSpecialization::kFilter1x1Pad0: return "Filter1x1Pad0";
    case ConvSpecialization::kFilter1x1Stride1Pad0: return "Filter1x1Stride1Pad0";
    case ConvSpecialization::kFilter3x3: return "Filter3x3";
  }
  return "?";
}

constexpr std::string_view to_token(KernelFamily f) {
  switch (f) {
    case KernelFamily::kImplicitGemm: return "implicit_gemm";
    case KernelFamily::kDepthwise: return "depthwise";
    case KernelFamily::kStreamK: return "streamk";
  }
  return "?";
}

constexpr int element_bytes(DataType t) { return t == DataType::kFp32 ? 4 : 2; }

// The relative L2 error a result may have against the reference (DESIGN.md "Correctness and numbers"): fp16 and
// bf16 1e-2, fp32 (TF32 MMAs) 2e-3. The profiler and the GPU checks hold every instance to it.
constexpr double relative_l2_tolerance(DataType t) { return t == DataType::kFp32 ? 2e-3 : 1e-2; }

inline std::optional<ConvDirection> parse_direction(std::string_view s) {
  for (auto d : {ConvDirection::kFwd, ConvDirection::kBwdData, ConvDirection::kBwdWeight}) {
    if (to_token(d) == s) return d;
  }
  return std::nullopt;
}

inline std::optional<DataType> parse_data_type(std::string_view s) {
  for (auto t : {DataType::kFp16, DataType::kBf16, DataType::kFp32}) {
    if (to_token(t) == s) return t;
  }
  return std::nullopt;
}

}  // namespace tiledispatch
