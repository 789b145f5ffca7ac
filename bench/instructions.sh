#!/usr/bin/env bash
# The cost of `lockstep check` against tree-sitter parse-only, in instructions
# executed (valgrind's callgrind): unlike times, the counts do not move with
# the load of a shared machine. One process per corpus file and pipeline.
#
#   cargo bench --bench check_throughput      # writes the corpus, if not there yet
#   bash bench/instructions.sh [MODE...]      # default modes: parse full
#
# MODE is a check_phases pipeline (parse pp ppparse div dbe full); ratios are
# against the first. Needs valgrind. Runs two files at a time: about ten
# minutes for the default corpus on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
corpus="${TMPDIR:-/tmp}/lockstep-bench-corpus"
[ -d "$corpus" ] || { echo "no corpus in $corpus: run cargo bench --bench check_throughput first" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is needed" >&2; exit 2; }
bin=$(cargo bench --no-run --bench check_phases 2>&1 | sed -n 's/.*Executable .*(\(.*\))$/\1/p' | tail -n 1)
[ -x "$bin" ] || { echo "could not build check_phases" >&2; exit 2; }
[ "$#" -gt 0 ] || set -- parse full
out=$(mktemp -d)
trap 'rm -r "$out"' EXIT

count() { # FILE MODE: prints "NAME INSTRUCTIONS"
    local n
    n=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" 1 2>&1 | sed -n 's/.*refs: *//p' | tr -d ,)
    echo "$(basename "$1") $n"
}

for mode in "$@"; do
    for f in "$corpus"/*; do
        count "$f" "$mode" >> "$out/$mode" &
        if [ "$(jobs -rp | wc -l)" -ge 2 ]; then wait -n; fi
    done
    wait
    sort -o "$out/$mode" "$out/$mode"
done

for mode in "$@"; do
    join "$out/$1" "$out/$mode" | awk -v mode="$mode" -v base="$1" '
        { b += $2; m += $3; if ($1 ~ /\.cu$/) { bc += $2; mc += $3 } else { bh += $2; mh += $3 } }
        END { printf "%-8s %9.0f M instructions   %.3f x %s   (HLSL %.3f, CUDA %.3f)\n", mode, m / 1e6, m / b, base, mh / bh, mc / bc }'
done
