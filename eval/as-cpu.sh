#!/usr/bin/env bash
# Runs a command as if this CPU lacked AVX-512 (and AMX), or AVX-VNNI too:
# every engine in it (ours, ONNX Runtime, candle's gemm, glibc's string
# functions) picks the kernels it would pick on such a CPU, on the same
# cores. For measuring what a laptop or desktop without AVX-512 gets on a
# server that has it. Needs Linux CPUID faulting (the `cpuid_fault` flag)
# and gcc; see eval/as-cpu.c.
#
# usage: eval/as-cpu.sh avx-vnni|avx2 COMMAND [ARG...]
set -euo pipefail
case "${1:-}" in
  avx-vnni | avx2) as=$1 ;;
  *) echo "usage: eval/as-cpu.sh avx-vnni|avx2 COMMAND [ARG...] (the CPU to run as)" >&2; exit 2 ;;
esac
shift
grep -qw cpuid_fault /proc/cpuinfo || { echo "as-cpu: this CPU has no cpuid_fault flag" >&2; exit 3; }
lib=${TMPDIR:-/tmp}/as-cpu-$(id -u).so
src=$(dirname "$0")/as-cpu.c
[ "$lib" -nt "$src" ] || gcc -O2 -shared -fPIC -o "$lib" "$src"
AS_CPU=$as LD_PRELOAD=$lib \
  GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD \
  exec "$@"
