#!/usr/bin/env bash
# `lockstep run` against Oclgrind, whole process, race detection on in both,
# on the OpenCL kernels in bench/oclgrind/ (each with its .sim for Oclgrind
# and its .toml launch file for lockstep). The tools alternate kernel by
# kernel, round after round, so load from other work hits both alike.
#
#   bash bench/emu_vs_oclgrind.sh [ROUNDS] [KERNEL...]    # default: 3 rounds, all four kernels
#
# Needs GNU time (/usr/bin/time) and oclgrind-kernel (Debian: `oclgrind`, `time`) and a release
# build (`cargo build --release`; LOCKSTEP=path overrides the binary). Prints one line per run:
#   kernel tool round wall_s user_s sys_s peak_rss_kb
# then, per kernel and tool, the medians and the ratio of median wall times.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
lockstep="${LOCKSTEP:-$here/../target/release/lockstep}"
rounds="${1:-3}"
shift || true
kernels=("$@")
[ ${#kernels[@]} -gt 0 ] || kernels=(stencil matmul histogram reduce)
declare -A groups=([stencil]=256 [matmul]=32,32 [histogram]=1024 [reduce]=32768)
declare -A size=([stencil]=256 [matmul]=16,16 [histogram]=256 [reduce]=256)
cd "$here/oclgrind"
log="$(mktemp)"
for round in $(seq "$rounds"); do
    for k in "${kernels[@]}"; do
        /usr/bin/time -o "$log" -a -f "$k lockstep $round %e %U %S %M" \
            "$lockstep" run "$k.cl" --groups "${groups[$k]}" --group-size "${size[$k]}" --input "$k.toml" > /dev/null 2>&1
        /usr/bin/time -o "$log" -a -f "$k oclgrind $round %e %U %S %M" \
            oclgrind-kernel --data-races "$k.sim" > /dev/null 2>&1
        tail -n 2 "$log"
    done
done
echo
python3 - "$log" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    k, tool, _, wall, user, sys_, rss = line.split()
    runs.setdefault((k, tool), []).append((float(wall), float(user) + float(sys_), int(rss)))
print("kernel tool median_wall_s median_cpu_s median_peak_MB")
for (k, tool), rs in runs.items():
    print(k, tool, statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs), statistics.median(r[2] for r in rs) // 1024)
for k in dict.fromkeys(k for k, _ in runs):
    if (k, "lockstep") in runs and (k, "oclgrind") in runs:
        ratio = statistics.median(r[0] for r in runs[(k, "oclgrind")]) / statistics.median(r[0] for r in runs[(k, "lockstep")])
        print(f"{k}: lockstep {ratio:.1f}x faster (ratio of median wall times)")
PY
rm -f "$log"
