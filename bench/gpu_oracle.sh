#!/usr/bin/env bash
# Device side of bench/gpu_oracle.py: compile each harness in DIR with nvcc
# and run every kernel under compute-sanitizer's racecheck and synccheck, in
# parallel. Run from the repository root (the harnesses include the kernel
# files by their repository paths). Logs land in DIR beside the harnesses.
#
#   bash bench/gpu_oracle.sh DIR [ARCH]      (ARCH default sm_90)
set -uo pipefail
dir=$1 arch=${2:-sm_90}
jobs=$(nproc)
ls "$dir"/*.cu | sed 's/\.cu$//' | xargs -P "$jobs" -I{} sh -c \
    'nvcc -arch='"$arch"' -lineinfo -std=c++17 -w --extended-lambda --expt-relaxed-constexpr -include cuda_fp16.h -I . -o {}.bin {}.cu > {}.compile.log 2>&1 && touch {}.bin.ok'
python3 - "$dir" > "$dir/jobs.txt" <<'PY'
import json, sys, os
d = sys.argv[1]
for stem, e in json.load(open(os.path.join(d, "manifest.json"))).items():
    if not os.path.exists(os.path.join(d, stem + ".bin.ok")):
        continue
    for k in e["kernels"]:
        for s in range(len(k.get("shapes", []))):
            for tool in ("racecheck", "synccheck"):
                print(stem, k["index"], s, tool)
PY
xargs -P "$jobs" -L 1 sh -c \
    'timeout 120 compute-sanitizer --tool $3 --print-limit 200 $( [ "$3" = racecheck ] && echo --racecheck-report hazard ) '"$dir"'/$0.bin $1 $2 > '"$dir"'/$0.$1.$2.$3.log 2>&1; echo "exit: $?" >> '"$dir"'/$0.$1.$2.$3.log' < "$dir/jobs.txt"
echo "compiled: $(ls "$dir"/*.bin.ok 2>/dev/null | wc -l) of $(ls "$dir"/*.cu | wc -l); runs: $(wc -l < "$dir/jobs.txt")"
