#!/usr/bin/env bash
# Real-code corpus: run `lockstep check` over third-party GPU kernels fetched
# from PyPI at run time, and summarise cost, crashes, findings and gaps.
#
#   bash bench/corpus.sh [--set ggml|more] [--sample N] [--timeout S] [--mem MIB] [--jobs J] [--languages L,...] [--only TEXT]
#
#   --set            which packages: ggml (default; llama-cpp-python's vendored
#                    ggml, the set the recorded results compare) or more (other
#                    projects' kernels: DeepSpeed, gsplat, mamba-ssm,
#                    torch-scatter, CuPy with CUB, PyOpenCL, Kompute), a set
#                    no precision work was shaped on
#   --languages      which of the tree's languages to check: cuda, hlsl,
#                    opencl, glsl, metal, wgsl (default cuda,hlsl, the set the
#                    recorded results compare)
#   --only           check only the files whose path contains TEXT (one
#                    kernel file again, with the flags the full run gives it)
#
#   LOCKSTEP_CORPUS  scratch folder (default /tmp/lockstep-corpus, or
#                    /tmp/lockstep-corpus-SET for another set); the
#                    download, the per-file results, summary.json, sample.txt
#   SAMPLE_SEED      seed for the sampled findings (default 1)
#
# The kernels are never copied into the repository: they are downloaded into
# the scratch folder (once; a rerun reuses them) and read from there. This is
# a benchmark, not a test: it needs the network on the first run.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

# --mem caps each process's address space: ggml's mmq.cuh alone reaches
# 17 GiB of RSS, and the machine is shared. A file over the cap aborts and is
# reported as out of memory.
sample=8 timeout_s=60 mem_mib=4096 jobs=1 languages=cuda,hlsl only= set=ggml
while [ "$#" -gt 0 ]; do
    case "$1" in
        --set) set=$2; shift 2 ;;
        --sample) sample=$2; shift 2 ;;
        --timeout) timeout_s=$2; shift 2 ;;
        --mem) mem_mib=$2; shift 2 ;;
        --jobs) jobs=$2; shift 2 ;;
        --languages) languages=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        *) echo "usage: bash bench/corpus.sh [--set ggml|more] [--sample N] [--timeout S] [--mem MIB] [--jobs J] [--languages L,...] [--only TEXT]" >&2; exit 2 ;;
    esac
done
default_corpus=/tmp/lockstep-corpus
[ "$set" = ggml ] || default_corpus=/tmp/lockstep-corpus-$set
corpus=${LOCKSTEP_CORPUS:-$default_corpus}
seed=${SAMPLE_SEED:-1}

# Sources: PyPI sdists, pinned so that runs compare. Each entry is
# "name version kept-folder include-dirs...": only the kept folder of the
# sdist is unpacked ("." keeps all; DeepSpeed ships its sources twice), and
# the include dirs (relative to the package's root) are those the project's
# own build passes; system headers such as <vector> stay missing on purpose:
# lockstep has no C++ standard library.
case "$set" in
    ggml) sources=(
        "llama-cpp-python 0.3.36 . vendor/llama.cpp/ggml/include vendor/llama.cpp/ggml/src vendor/llama.cpp/ggml/src/ggml-metal"
    ) ;;
    more) sources=(
        "deepspeed 0.19.8 csrc csrc/includes csrc/transformer/inference/includes"
        "gsplat 1.5.3 gsplat/cuda gsplat/cuda/include gsplat/cuda/csrc"
        "mamba-ssm 2.3.2.post1 csrc csrc/selective_scan"
        "torch-scatter 2.1.2 csrc csrc"
        "cupy 14.2.0 cupy/_core/include cupy/_core/include cupy/_core/include/cupy/_cccl/cub cupy/_core/include/cupy/_cccl/libcudacxx/include"
        "pyopencl 2026.1.4 pyopencl/cl pyopencl/cl"
        "kp 0.9.0 ."
    ) ;;
    *) echo "unknown set $set (ggml, more)" >&2; exit 2 ;;
esac

# The sdist's address comes from PyPI's JSON API, not `pip download`: pip
# prepares the package's metadata, which for CUDA packages runs a setup.py
# that needs torch.
mkdir -p "$corpus/dl" "$corpus/src"
for s in "${sources[@]}"; do
    read -r name version kept _ <<< "$s"
    dir="$corpus/src/$name-$version"
    [ -e "$dir/.done" ] && continue
    tarball=$(python3 - "$name" "$version" "$corpus/dl" <<'PY'
import json, os, sys, urllib.parse, urllib.request
name, version, dl = sys.argv[1:]
api = f"https://pypi.org/pypi/{name}/{version}/json"
try:
    release = json.load(urllib.request.urlopen(api, timeout=60))
except OSError:  # some mirrors answer only the latest release's page
    api = f"https://pypi.org/pypi/{name}/json"
    release = json.load(urllib.request.urlopen(api, timeout=60))
    if release["info"]["version"] != version:
        sys.exit(f"{name} {version}: not found on PyPI")
sdist = next(u for u in release["urls"] if u["packagetype"] == "sdist")
path = os.path.join(dl, sdist["filename"])
if not os.path.exists(path):
    urllib.request.urlretrieve(urllib.parse.urljoin(api, sdist["url"]), path)
print(path)
PY
) || { echo "no sdist for $name $version" >&2; exit 2; }
    rm -rf "$dir" && mkdir -p "$dir"
    top=$(tar tzf "$tarball" | sed -n "1s|/.*||p")
    if [ "$kept" = . ]; then
        tar xzf "$tarball" -C "$dir" --strip-components=1
    else
        tar xzf "$tarball" -C "$dir" --strip-components=1 "$top/$kept"
    fi
    touch "$dir/.done"
done

cargo build --release --quiet
bin=$repo/target/release/lockstep
[ -x /usr/bin/time ] || { apt-get install -y time >/dev/null 2>&1 || { echo "GNU time (/usr/bin/time) is needed" >&2; exit 2; }; }

# Per-file results of this run: NNNN.json (stdout), .err (stderr), .time
# ("wall-seconds peak-KiB", from GNU time around `timeout`, whose rusage
# covers the killed child too), and manifest.tsv (index, source, file).
res="$corpus/results"
rm -rf "$res" && mkdir -p "$res"
: > "$res/manifest.tsv"

run_one() { # INDEX FILE INCLUDE-FLAGS...
    local i=$1 f=$2 rc=0; shift 2
    ulimit -v $((mem_mib * 1024))
    /usr/bin/time -f '%e %M' -o "$res/$i.time" \
        timeout -k 5 "$timeout_s" "$bin" check --format json "$@" "$f" > "$res/$i.json" 2> "$res/$i.err" || rc=$?
    echo "$rc" > "$res/$i.rc"
}

# The file-name patterns of the languages asked for.
patterns=()
for lang in ${languages//,/ }; do
    case "$lang" in
        cuda) exts="cu cuh" ;;
        hlsl) exts="hlsl hlsli fx fxh csh" ;;
        opencl) exts="cl" ;;
        glsl) exts="comp glsl" ;;
        metal) exts="metal" ;;
        wgsl) exts="wgsl" ;;
        *) echo "unknown language $lang (cuda, hlsl, opencl, glsl, metal, wgsl)" >&2; exit 2 ;;
    esac
    for e in $exts; do
        [ "${#patterns[@]}" -gt 0 ] && patterns+=(-o)
        patterns+=(-name "*.$e")
    done
done

# ggml's Vulkan shaders are templates: its generator (vulkan-shaders-gen)
# compiles each with -D flags naming the types of one variant. These are its
# f32 variant's, as a user checking the shaders would pass them; without them
# every buffer has an unknown element type. A shader named for a quantized
# type (`mul_mat_vec_q4_k.comp`) gets that type's DATA_A_ flag instead, from
# which the shaders' types.glsl defines A_TYPE.
quant_types="iq1_m iq1_s iq2_s iq2_xs iq2_xxs iq3_s iq3_xxs iq4_nl iq4_xs mxfp4 nvfp4 q1_0 q2_0 q2_k q3_k q4_0 q4_1 q4_k q5_0 q5_1 q5_k q6_k q8_0 tq1_0 tq2_0"
data_a_flag() { # FILE: the DATA_A_ flag its name asks for
    local b q t=F32
    b=$(basename "$1"); b=${b%.*}
    for q in $quant_types; do
        case "$b" in *_"$q" | *_"$q"_*) t=${q^^} ;; esac
    done
    # Built only for quantized types: their first variant's.
    case "$b" in
        mul_mmq* | mul_mat_vecq | copy_to_quant) t=Q4_0 ;;
        lightning_indexer) t=IQ4_NL ;;
    esac
    echo "DATA_A_$t=1"
}
glsl_defines=(-D LOAD_VEC_A=1 -D LOAD_VEC_B=1 -D A_TYPE=float -D B_TYPE=float -D B_TYPE_SCALAR=float
    -D B_TYPEV2=vec2 -D B_TYPEV4=vec4 -D D_TYPE=float -D D_TYPEV4=vec4 -D FLOAT_TYPE=float -D FLOAT_TYPEV2=vec2 -D FLOAT_TYPEV4=vec4
    -D ACC_TYPE=float -D ACC_TYPEV2=vec2 -D ACC_TYPEV4=vec4 -D O_TYPE=float -D ROPE_D_TYPE=float -D MAT_TYPE=float
    -D TO_FLOAT_TYPE=float -D SHMEM_TYPE=float -D "UNROLL=[[unroll]]")
# Shaders the generator (vulkan-shaders-gen.cpp) builds with flags beyond
# the types' get those of their first variant.
glsl_variant_flags() { # FILE: the -D flags its generator passes beyond the type's
    case "$(basename "$1")" in
        copy_to_quant.comp) echo "-D S_TYPE=float" ;;
        get_rows.comp) echo "-D TEMP_TYPE=FLOAT_TYPE" ;;
        conv2d_mm.comp) echo "-D USE_COLLECTIVES=1" ;;
    esac
}

# ggml's OpenCL kernels are compiled by its host code (ggml-opencl.cpp) for
# the device it finds, whose compiler predefines its extension macros; the
# corpus checks them as built for an Adreno GPU, ggml's main OpenCL target.
# Flash attention and the Adreno GEMV kernels get the sizes the host passes
# for their first variant.
opencl_defines=(-D cl_qcom_reqd_sub_group_size=1)
opencl_variant_flags() { # FILE: the -D flags its host build passes
    case "$(basename "$1")" in
        flash_attn_*) echo "-D DK=64 -D DV=64 -D BLOCK_M=64 -D BLOCK_N=32" ;;
        gemv_noshuffle*_spec*) echo "-D SIMDGROUP_WIDTH=64 -D LINE_STRIDE_A=2048 -D BLOCK_STRIDE_A=16384" ;;
        gemv_noshuffle*) echo "-D SIMDGROUP_WIDTH=64" ;;
    esac
}

# ggml's WebGPU shaders are templates too: its host code (ggml-webgpu-shader-lib.hpp)
# expands `#ifdef`/`#define` with one variant's -D flags before WebGPU sees them.
# These are the f32 variant's, with the workgroup and tile sizes it picks.
wgsl_defines=(-D WG_SIZE=256 -D DataType=f32 -D SRC_TYPE=f32 -D DST_TYPE=f32 -D SRC0_TYPE=f32 -D SRC1_TYPE=f32
    -D WEIGHT_TYPE=f32 -D INPUT_TYPE=f32 -D OUTPUT_TYPE=f32 -D TYPE_F32 -D SRC0_INNER_TYPE=f32 -D SRC1_INNER_TYPE=f32
    -D BLOCK_SIZE=1u -D S_V=128u -D OUTPUTS_PER_WG=4 -D TILE_M=4u -D TILE_N=4u -D TILE_K=8u -D WORKGROUP_SIZE_M=8u
    -D WORKGROUP_SIZE_N=8u -D MIN_SUBGROUP_SIZE=32u -D MAX_SUBGROUP_SIZE=32u -D BATCH_N=8 -D TOKENS_PER_WG=8u
    -D TOKENS_PER_TILE=8u -D HEAD_DIM_QK=64 -D HEAD_DIM_V=64 -D Q_TILE=4 -D KV_TILE=32 -D D_SPLIT=4u -D NUM_COLS=1
    -D N_EXPERTS=8 -D USE_WORKGROUP_REDUCTION -D MUL_ACC_FLOAT -D INIT_SRC0_SHMEM_FLOAT -D INIT_SRC1_SHMEM_FLOAT)
wgsl_variant_flags() { # FILE: the operation its host build picks first
    case "$(basename "$1")" in
        binary.wgsl) echo "-D OP_ADD" ;;
        glu.wgsl) echo "-D OP_REGLU" ;;
        unary.wgsl) echo "-D ABS" ;;
        row_norm.wgsl) echo "-D RMS_NORM" ;;
        get_rows.wgsl) echo "-D F32" ;;
        solve_tri.wgsl) echo "-D N=64 -D K_TILE=16" ;;
        set_rows_quant.wgsl) echo "-D DST_Q8_0" ;;
        quantize_q8.wgsl) echo "-D Q8_1_T" ;;
        mul_mat_id.wgsl) echo "-D SCALAR -D MUL_MAT_ID" ;;
        mul_mat*.wgsl) echo "-D SCALAR" ;;
    esac
}

i=0
for s in "${sources[@]}"; do
    read -r name version _ incs <<< "$s"
    dir="$corpus/src/$name-$version"
    flags=()
    for d in $incs; do flags+=(-I "$dir/$d"); done
    # One process per file: a hang or crash costs one file, and time/RSS are
    # per file. Only the languages asked for are run; the others are
    # counted by the report from the tree.
    while IFS= read -r -d '' f; do
        [[ -z "$only" || "$f" == *"$only"* ]] || continue
        i=$((i + 1)); idx=$(printf '%05d' "$i")
        printf '%s\t%s\t%s\n' "$idx" "$name-$version" "$f" >> "$res/manifest.tsv"
        case "$f" in
            # shellcheck disable=SC2046 # the variant's flags are words
            *.comp | *.glsl) run_one "$idx" "$f" "${flags[@]}" "${glsl_defines[@]}" -D "$(data_a_flag "$f")" $(glsl_variant_flags "$f") & ;;
            # shellcheck disable=SC2046 # the variant's flags are words
            *.cl) run_one "$idx" "$f" "${flags[@]}" "${opencl_defines[@]}" $(opencl_variant_flags "$f") & ;;
            # shellcheck disable=SC2046 # the variant's flags are words
            *.wgsl) run_one "$idx" "$f" "${flags[@]}" "${wgsl_defines[@]}" $(wgsl_variant_flags "$f") & ;;
            *) run_one "$idx" "$f" "${flags[@]}" & ;;
        esac
        if [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; then wait -n || true; fi
    done < <(find "$dir" -type f \( "${patterns[@]}" \) -print0 | sort -z)
done
wait || true

python3 "$repo/bench/corpus_report.py" --corpus "$corpus" --bin "$bin" --sample "$sample" --seed "$seed" \
    --timeout "$timeout_s" --mem "$mem_mib" --languages "$languages" --commit "$(git -C "$repo" rev-parse --short HEAD)"
