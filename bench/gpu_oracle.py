#!/usr/bin/env python3
"""Hardware ground truth for CUDA kernels: compute-sanitizer against lockstep.

    python3 bench/gpu_oracle.py prepare DIR FILE.cu...   # here: one harness per file
    bash bench/gpu_oracle.sh DIR                         # on a machine with a GPU
    python3 bench/gpu_oracle.py compare DIR              # here: lockstep beside it

`prepare` writes, for each kernel file, a harness that includes the file and
launches every kernel it can call (non-template kernels, and templates at each
explicit instantiation or launch with written arguments): pointer parameters
get a 64 MiB buffer whose integer cells hold their own index (index tables
are permutations) and whose other 4-byte cells hold distinct floats 1, 2, 3…
(racecheck ignores a write of the value a cell already holds), integer
scalars 256, floating scalars 1.0. The geometry is the file's `// args:
--group-size/--grid-size`, the kernel's `__launch_bounds__`, or a launch
written in the file; otherwise (256,1,1) for a kernel that names only x, and
(32,8,1) and (16,16,1) for one that names y or z, over two groups per axis.
Each shared-memory error lockstep reports adds a launch that replays its
witness: a group just wide enough for the witness's threads (and one of
whole warps), the parameter values the message names, one group.

`compare` runs `lockstep check` on each file and sets the source lines that
racecheck (shared-memory hazards) and synccheck (barrier misuse) reported
beside lockstep's findings on shared memory and barriers. A hazard the
hardware shows is a fact about these inputs; a lockstep finding the hardware
does not show may need inputs or a geometry the harness did not choose.
"""
import json
import os
import re
import subprocess
import sys

INT_TYPES = {
    "int": ("int", 4), "signed": ("int", 4), "unsigned": ("unsigned", 4),
    "unsigned int": ("unsigned", 4), "uint": ("unsigned", 4), "int32_t": ("int", 4),
    "uint32_t": ("unsigned", 4), "long": ("long long", 8), "long long": ("long long", 8),
    "int64_t": ("long long", 8), "uint64_t": ("unsigned long long", 8),
    "size_t": ("unsigned long long", 8), "unsigned long": ("unsigned long long", 8),
    "unsigned long long": ("unsigned long long", 8), "short": ("short", 2),
    "unsigned short": ("unsigned short", 2), "char": ("char", 1),
    "unsigned char": ("unsigned char", 1), "bool": ("bool", 1),
}
FLOAT_TYPES = {"float": "float", "double": "double"}
QUALIFIERS = re.compile(r"\b(const|volatile|__restrict__|__restrict|restrict)\b")


def split_top(text, sep=","):
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "(<[{":
            depth += 1
        elif ch in ")>]}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return [p.strip() for p in parts]


def matching(text, start, open_ch, close_ch):
    depth = 0
    for i in range(start, len(text)):
        if text[i] == open_ch:
            depth += 1
        elif text[i] == close_ch:
            depth -= 1
            if depth == 0:
                return i
    return -1


def param_kind(param):
    """('ptr', pointee) or ('scalar', ctype, literal) or None (not callable)."""
    param = re.sub(r"\s*=.*$", "", param)
    if "*" in param:
        pointee = QUALIFIERS.sub(" ", param.split("*")[0])
        return ("ptr", " ".join(pointee.split()))
    words = QUALIFIERS.sub(" ", param).split()
    if len(words) < 2:
        return None
    base = " ".join(words[:-1])
    if base in INT_TYPES:
        ctype, _ = INT_TYPES[base]
        return ("scalar", ctype, "true" if ctype == "bool" else "256")
    if base in FLOAT_TYPES:
        return ("scalar", FLOAT_TYPES[base], "1.0")
    return None


def file_geometry(text):
    group = grid = None
    for m in re.finditer(r"//\s*args:(.*)", text):
        g = re.search(r"--group-size\s+(\d+),(\d+),(\d+)", m.group(1))
        if g:
            group = tuple(int(x) for x in g.groups())
        g = re.search(r"--grid-size\s+(\d+),(\d+),(\d+)", m.group(1))
        if g:
            grid = tuple(int(x) for x in g.groups())
    return group, grid


def dims(expr):
    expr = expr.strip()
    if re.fullmatch(r"\d+", expr):
        return (int(expr), 1, 1)
    m = re.fullmatch(r"dim3\s*\(([\d\s,]+)\)", expr)
    if m:
        vals = [int(v) for v in m.group(1).split(",")]
        return tuple(vals + [1] * (3 - len(vals)))
    return None


def kernels(text):
    """Each callable kernel instance: (symbol, params, template_args or None, launch_bounds)."""
    found = []
    for m in re.finditer(r"__global__\s+(?:__launch_bounds__\s*\(([^)]*)\)\s*)?void\s+(?:__launch_bounds__\s*\(([^)]*)\)\s*)?(\w+)\s*(<[^(]*>)?\s*\(", text):
        before = text[:m.start()].rstrip()
        if before.endswith("template") or re.search(r"\btemplate\s*$", before):
            continue  # an explicit instantiation, read below
        name = m.group(3)
        close = matching(text, m.end() - 1, "(", ")")
        if close < 0:
            continue  # an unclosed parameter list: nothing to launch
        params = split_top(text[m.end():close])
        params = [p for p in params if p and p != "void"]
        bounds = m.group(1) or m.group(2)
        first_bound = split_top(bounds or "")[:1]
        bound = int(first_bound[0]) if first_bound and first_bound[0].isdigit() else None
        is_template = re.search(r"template\s*<[^;{]*>\s*$", before) is not None
        if not is_template:
            found.append((name, params, None, bound))
            continue
        seen = set()
        for inst in re.finditer(r"template\s+__global__\s+void\s+" + name + r"\s*<([^>]*)>\s*\(([^)]*)\)", text):
            if inst.group(1) in seen:
                continue
            seen.add(inst.group(1))
            types = split_top(inst.group(2))
            found.append((name, [t + " p" + str(i) for i, t in enumerate(types)], inst.group(1), bound))
        for launch in re.finditer(r"\b" + name + r"\s*<([^<>]*)>\s*<<<", text):
            if launch.group(1) in seen:
                continue
            seen.add(launch.group(1))
            found.append((name, params, launch.group(1), bound))
    return found


def written_launch(text, name):
    m = re.search(r"\b" + name + r"\s*(?:<[^<>]*>)?\s*<<<(.*?)>>>", text)
    if not m:
        return None
    parts = split_top(m.group(1))
    if len(parts) < 2:
        return None
    grid, group = dims(parts[0]), dims(parts[1])
    if grid and group:
        return group, grid
    return None


def names_y_or_z(text, name):
    """Whether the kernel's body indexes threads by y or z (lockstep takes a
    kernel naming only x to be launched one row wide)."""
    m = re.search(r"\b" + name + r"\s*\([^;{]*\)\s*\{", text)
    if not m:
        return True
    end = matching(text, m.end() - 1, "{", "}")
    body = text[m.end() - 1:] if end < 0 else text[m.end() - 1:end + 1]
    return re.search(r"\b(threadIdx|blockDim)\s*\.\s*[yz]\b", body) is not None


def kernel_at(text, line):
    """The kernel whose body holds a line, or None (a helper's line)."""
    for m in re.finditer(r"__global__[^;{]*?\b(\w+)\s*(?:<[^(]*>)?\s*\([^;{]*\)\s*\{", text):
        end = matching(text, m.end() - 1, "{", "}")
        if end >= 0 and text.count("\n", 0, m.start()) < line <= text.count("\n", 0, end) + 1:
            return m.group(1)
    return None


def witness_replays(path, text, binary):
    """One launch per shared-memory error lockstep reports: a group just wide
    enough for its witness threads (and one of whole warps), its named
    parameter values, one group unless it names another."""
    res = subprocess.run([binary, "check", "--format", "json", path], capture_output=True, text=True)
    try:
        diags = json.loads(res.stdout)["diagnostics"]
    except (ValueError, KeyError):
        return []
    replays = []
    for d in diags:
        if d["severity"] != "error" or not SHARED_RULES.search(d["rule"]):
            continue
        threads = [tuple(int(v) for v in t) for t in re.findall(r"thread \((\d+),(\d+),(\d+)\)", d["message"])]
        if not threads:
            continue
        values = dict(re.findall(r"`(\w+)` = (-?\d+)", d["message"]))
        exact = tuple(max(t[a] for t in threads) + 1 for a in range(3))
        whole = ((exact[0] + 31) // 32 * 32,) + exact[1:]
        kernel = kernel_at(text, d["line"])
        for group in dict.fromkeys([exact, whole]):
            replays.append((group, (1, 1, 1), values, kernel))
    return replays


def harness(path, text, replays=()):
    fgroup, fgrid = file_geometry(text)
    dynamic = 16384 if "extern __shared__" in text else 0
    lines = [
        "#define main lockstep_fixture_main",
        '#include "%s"' % os.path.relpath(path),
        "#undef main",
        "#include <cstdio>",
        "#include <cstdlib>",
        "#include <cstring>",
        "static void* device_buffer(int cell) {",
        "    const size_t bytes = 64u << 20;",
        "    char* host = (char*)calloc(bytes, 1);",
        "    for (size_t i = 0; i < bytes / (cell ? cell : 4); ++i) {",
        "        if (cell == 4) ((unsigned*)host)[i] = (unsigned)i;",
        "        if (cell == 1) ((unsigned char*)host)[i] = (unsigned char)i;",
        "        if (cell == 0) ((float*)host)[i] = (float)(i + 1);",
        "    }",
        "    void* dev = 0;",
        "    cudaMalloc(&dev, bytes);",
        "    cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice);",
        "    free(host);",
        "    return dev;",
        "}",
        "int main(int argc, char** argv) {",
        "    int which = atoi(argv[1]);",
        "    int shape = atoi(argv[2]);",
        "    cudaError_t err = cudaSuccess;",
    ]
    manifest = []
    for index, (name, params, targs, bound) in enumerate(kernels(text)):
        kinds = [param_kind(p) for p in params]
        if any(k is None for k in kinds):
            manifest.append({"kernel": name, "targs": targs, "skipped": "a parameter type the harness cannot make"})
            continue
        written = written_launch(text, name)
        if fgroup:
            shapes = [(fgroup, fgrid or tuple(2 if d > 1 or i == 0 else 1 for i, d in enumerate(fgroup)))]
        elif bound:
            shapes = [((bound, 1, 1), fgrid or (2, 1, 1))]
        elif written:
            shapes = [written]
        elif names_y_or_z(text, name):
            shapes = [((32, 8, 1), fgrid or (2, 2, 1)), ((16, 16, 1), fgrid or (2, 2, 1))]
        else:
            shapes = [((256, 1, 1), fgrid or (2, 1, 1))]
        shapes = [(group, grid, {}) for group, grid in shapes] + [
            (group, grid, values) for group, grid, values, kernel in replays if kernel in (None, name)]
        symbol = name + ("<%s>" % targs if targs else "")
        body = ["    if (which == %d) {" % index]
        args = []
        names = [re.findall(r"\w+", re.sub(r"\s*=.*$", "", p))[-1] for p in params]
        for i, k in enumerate(kinds):
            if k[0] == "ptr":
                pointee = k[1]
                cell = 4 if pointee in ("int", "unsigned", "unsigned int", "uint", "int32_t", "uint32_t") else (
                    1 if pointee in ("unsigned char", "char", "uint8_t", "int8_t") else 0)
                body.append("        void* a%d = device_buffer(%d);" % (i, cell))
            else:
                body.append("        %s a%d = (%s)%s;" % (k[1], i, k[1], k[2]))
                for s, (_, _, values) in enumerate(shapes):
                    if names[i] in values:
                        body.append("        if (shape == %d) a%d = (%s)%s;" % (s, i, k[1], values[names[i]]))
            args.append("&a%d" % i)
        body.append("        void* args[] = {%s};" % ", ".join(args + ["0"]))
        for s, (group, grid, _) in enumerate(shapes):
            body.append("        if (shape == %d) err = cudaLaunchCooperativeKernel((void*)%s, dim3(%d,%d,%d), dim3(%d,%d,%d), args, %d, 0);"
                        % (s, symbol, *grid, *group, dynamic))
        body.append("    }")
        lines += body
        manifest.append({"kernel": name, "targs": targs, "index": index,
                         "shapes": [{"group": g, "grid": d, "values": v} for g, d, v in shapes]})
    lines += [
        "    if (err == cudaSuccess) err = cudaDeviceSynchronize();",
        '    printf("launch: %s\\n", cudaGetErrorString(err));',
        "    return err == cudaSuccess ? 0 : 1;",
        "}",
    ]
    return "\n".join(lines) + "\n", manifest


def prepare(out, files, binary):
    os.makedirs(out, exist_ok=True)
    everything = {}
    for path in files:
        text = open(path, encoding="utf-8", errors="replace").read()
        stem = re.sub(r"[^A-Za-z0-9_]", "_", os.path.relpath(path))
        replays = witness_replays(path, text, binary)
        source, manifest = harness(path, text, replays)
        with open(os.path.join(out, stem + ".cu"), "w") as f:
            f.write(source)
        everything[stem] = {"path": os.path.relpath(path), "kernels": manifest}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(everything, f, indent=1)


HAZARD = re.compile(r"([\w./-]+\.cuh?):(\d+)")
SHARED_RULES = re.compile(r"groupshared|fence-without-sync|warp-synchronous|barrier-in-divergent|possible-race|benign")


def sanitizer_lines(log):
    """Per report of racecheck/synccheck, the set of source lines it names."""
    reports, cur = [], None
    for line in log.splitlines():
        if re.search(r"(Error|Warning): |Barrier error", line):
            if cur:
                reports.append(cur)
            cur = {"text": line.split("=========")[-1].strip(), "lines": set()}
        if cur is not None:
            for m in HAZARD.finditer(line):
                cur["lines"].add((os.path.basename(m.group(1)), int(m.group(2))))
    if cur:
        reports.append(cur)
    return reports


def compare(out, binary):
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    rows = []
    for stem, entry in sorted(manifest.items()):
        path = entry["path"]
        res = subprocess.run([binary, "check", "--format", "json", "--include-unproven", "--include-benign", path],
                             capture_output=True, text=True)
        try:
            diags = json.loads(res.stdout)["diagnostics"]
        except (ValueError, KeyError):
            diags = []
        ours = []
        for d in diags:
            if not SHARED_RULES.search(d["rule"]):
                continue
            lines = {(os.path.basename(d["path"]), d["line"])} | {
                (os.path.basename(l["path"]), l["line"]) for l in d.get("labels", [])}
            ours.append((d["rule"], d["severity"], sorted(lines)))
        hw, failed = {}, set()
        for tool in ("racecheck", "synccheck"):
            for name in sorted(os.listdir(out)):
                if name.startswith(stem + ".") and name.endswith("." + tool + ".log"):
                    log = open(os.path.join(out, name), errors="replace").read()
                    if "launch: no error" not in log:
                        failed.add(name.split(".")[1])
                    for rep in sanitizer_lines(log):
                        key = (tool, tuple(sorted(rep["lines"])))
                        hw.setdefault(key, rep["text"])
        compiled = os.path.exists(os.path.join(out, stem + ".bin.ok"))
        rows.append({"file": os.path.relpath(path), "compiled": compiled, "failed_kernels": sorted(failed),
                     "hardware": [{"tool": t, "lines": list(l), "text": x} for (t, l), x in sorted(hw.items())],
                     "lockstep": [{"rule": r, "severity": s, "lines": l} for r, s, l in ours]})
    for row in rows:
        failed = [k["kernel"] for k in manifest[re.sub(r"[^A-Za-z0-9_]", "_", row["file"])]["kernels"]
                  if str(k.get("index")) in row["failed_kernels"]]
        print("==", row["file"], "" if row["compiled"] else "(did not compile)",
              "launch failed: " + ", ".join(failed) if failed else "")
        hw_lines = [set(h["lines"]) for h in row["hardware"]]
        ls_lines = [set(o["lines"]) for o in row["lockstep"]]
        for h in row["hardware"]:
            seen = any(set(h["lines"]) & o for o in ls_lines)
            print("  hw %-9s %-14s %s%s" % (h["tool"], ",".join(str(l) for _, l in h["lines"]), h["text"][:90],
                                            "" if seen else "   <-- lockstep silent"))
        for o in row["lockstep"]:
            seen = any(set(o["lines"]) & h for h in hw_lines)
            print("  ls %-40s %-8s %-14s%s" % (o["rule"], o["severity"], ",".join(str(l) for _, l in o["lines"]),
                                              "" if seen else "   <-- hardware silent"))
    json.dump(rows, open(os.path.join(out, "comparison.json"), "w"), indent=1)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "prepare":
        prepare(sys.argv[2], sys.argv[3:], os.environ.get("LOCKSTEP", "target/release/lockstep"))
    elif len(sys.argv) >= 3 and sys.argv[1] == "compare":
        compare(sys.argv[2], os.environ.get("LOCKSTEP", "target/release/lockstep"))
    else:
        sys.exit(__doc__)
