#!/usr/bin/env bash
# One call on the GPU machine: build rule sets with SCons (system CUDA, -j16), then run the GPU check over each
# generated instance set on the problem battery, and compute-sanitizer memcheck over the `tiny` set.
# Usage (repository root, after installing .whl into the running Python):
#   [LEGACY_DIR=DIR] [CUDA_ROOT=DIR] [SCONS_EXTRA="memory=120"] bash bench/gpu_check/run_generated_check.sh RULESET ..
# (SCONS_EXTRA: further SCons options, e.g. memory= where the machine under-reports its memory at start;
# SKIP_MEMCHECK=1 leaves out the compute-sanitizer pass over tiny; RACECHECK=1 adds racecheck's, which
# reports shared-memory hazards between threads of a block, bounded by RACECHECK_TIMEOUT seconds, 300 by default.)
# Prints checked / passed / not supported / failed per direction for each rule set; logs go to $OUT.
set -u -o pipefail
ROOT=$(pwd)
OUTDIR=${OUT:-$ROOT/build/gpu_check}
mkdir -p "$OUTDIR"
CUDA=${CUDA_ROOT:-/usr/local/cuda}
LEGACY=${LEGACY_DIR:-../shared/legacy/ck_builder_configs}
NVCC="$CUDA/bin/nvcc"
CUTE=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/cutlass_library/source/include
FLAGS=(-std=c++17 -O3 --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a -isystem "$CUTE" -Iinstances/include)
status=0
for ruleset in "$@"; do
  variant=build/$ruleset-sm_90a
  echo "== $ruleset: build"
  if ! python3 -m SCons -Q -j16 ruleset="$ruleset" toolchain=system cuda_root="$CUDA" legacy_dir="$LEGACY" ${SCONS_EXTRA:-} profiler check \
      > "$OUTDIR/build_$ruleset.log" 2>&1; then
    echo "build of $ruleset failed:"; tail -30 "$OUTDIR/build_$ruleset.log"; status=1; continue
  fi
  tail -1 "$OUTDIR/build_$ruleset.log"
  mkdir -p "$variant/gpu_check"
  "$NVCC" "${FLAGS[@]}" -DTD_GENERATED_SET -c bench/gpu_check/check_main.cu -o "$variant/gpu_check/check_main.o" &&
    "$NVCC" -cudart=static "$variant/gpu_check/check_main.o" \
      "$variant/lib/libfwd_instances.a" "$variant/lib/libbwd_data_instances.a" \
      "$variant/lib/libbwd_weight_instances.a" "$variant/lib/libtiledispatch_runtime.a" \
      -o "$variant/gpu_check/gpu_check" || { echo "gpu_check link failed for $ruleset"; status=1; continue; }
  echo "== $ruleset: GPU check"
  "$variant/gpu_check/gpu_check" --verbose > "$OUTDIR/gpu_check_$ruleset.txt" 2>&1 || status=1
  grep -E "^FAILED" "$OUTDIR/gpu_check_$ruleset.txt" | head -20
  sed -n '/^direction /,/^instances:/p' "$OUTDIR/gpu_check_$ruleset.txt"
  python3 bench/gpu_check/never_ran.py "$OUTDIR/gpu_check_$ruleset.txt" > "$OUTDIR/never_ran_$ruleset.txt"
  head -3 "$OUTDIR/never_ran_$ruleset.txt"
  if [ "$ruleset" = tiny ] && [ -z "${SKIP_MEMCHECK:-}" ] && [ -x "$CUDA/bin/compute-sanitizer" ]; then
    echo "== tiny: compute-sanitizer memcheck (no large layer)"
    timeout 300 "$CUDA/bin/compute-sanitizer" --tool memcheck --print-limit 20 \
      "$variant/gpu_check/gpu_check" --no-large > "$OUTDIR/memcheck_tiny.txt" 2>&1
    echo "memcheck rc=$?"; grep -E "ERROR SUMMARY" "$OUTDIR/memcheck_tiny.txt" | tail -1
  fi
  if [ "$ruleset" = tiny ] && [ -n "${RACECHECK:-}" ] && [ -x "$CUDA/bin/compute-sanitizer" ]; then
    echo "== tiny: compute-sanitizer racecheck (no large layer)"
    timeout "${RACECHECK_TIMEOUT:-300}" "$CUDA/bin/compute-sanitizer" --tool racecheck --racecheck-report hazard \
      --print-limit 20 "$variant/gpu_check/gpu_check" --no-large > "$OUTDIR/racecheck_tiny.txt" 2>&1
    echo "racecheck rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUTDIR/racecheck_tiny.txt" | tail -2
  fi
done
exit $status
