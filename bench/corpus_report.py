#!/usr/bin/env python3
"""Summarise a `bench/corpus.sh` run: reads $CORPUS/results (one JSON output,
stderr, exit code and `time` line per checked file) and the source trees, and
writes summary.txt, summary.json (also as summary-COMMIT.json, to compare
runs) and sample.txt (sampled findings with source context, to be judged)."""
import argparse
import collections
import json
import os
import random
import statistics
import subprocess
import time

# Extension -> language, for the file census.
LANGS = {
    ".cu": "CUDA", ".cuh": "CUDA",
    ".hlsl": "HLSL", ".hlsli": "HLSL", ".fx": "HLSL", ".fxh": "HLSL", ".csh": "HLSL",
    ".comp": "GLSL", ".glsl": "GLSL",
    ".cl": "OpenCL",
    ".metal": "Metal",
    ".wgsl": "WGSL",
}
NAMES = {"cuda": "CUDA", "hlsl": "HLSL", "opencl": "OpenCL", "glsl": "GLSL", "metal": "Metal", "wgsl": "WGSL"}


def count_lines(path):
    with open(path, "rb") as f:
        return f.read().count(b"\n")


def pct(xs, q):
    """Nearest-rank percentile of a non-empty list."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(q / 100 * len(xs) + 0.5)) - 1))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--sample", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--mem", type=int, default=4096)
    ap.add_argument("--commit", default="")
    ap.add_argument("--languages", default="cuda,hlsl")
    a = ap.parse_args()
    checked = {NAMES[x] for x in a.languages.split(",") if x in NAMES}
    src_root = os.path.join(a.corpus, "src")
    res = os.path.join(a.corpus, "results")
    rel = lambda p: os.path.relpath(p, src_root)

    # The rules that are findings (the rest, e.g. `unsupported` and
    # `include-not-found`, are notes about what lockstep could not read).
    rules_out = subprocess.run([a.bin, "rules"], capture_output=True, text=True).stdout
    finding_rules = [l.split()[0] for l in rules_out.splitlines() if l.strip()]

    # Census of the trees, per language, checked or not.
    census = collections.defaultdict(lambda: {"files": 0, "lines": 0})
    packages = sorted(d for d in os.listdir(src_root) if os.path.isdir(os.path.join(src_root, d)))
    for pkg in packages:
        for dirpath, _, names in os.walk(os.path.join(src_root, pkg)):
            for n in names:
                lang = LANGS.get(os.path.splitext(n)[1])
                if lang:
                    c = census[lang]
                    c["files"] += 1
                    c["lines"] += count_lines(os.path.join(dirpath, n))

    files = []
    with open(os.path.join(res, "manifest.tsv")) as m:
        for line in m:
            idx, pkg, path = line.rstrip("\n").split("\t")
            f = {"file": rel(path), "abs": path, "lines": count_lines(path)}
            f["rc"] = int(open(os.path.join(res, idx + ".rc")).read().strip() or -1)
            t = [l for l in open(os.path.join(res, idx + ".time")).read().splitlines() if l.strip()]
            wall, kib = t[-1].split() if t else ("nan", "0")
            f["wall_s"], f["rss_mib"] = float(wall), int(kib) / 1024
            f["timeout"] = f["rc"] in (124, 137)
            err = open(os.path.join(res, idx + ".err"), errors="replace").read().strip()
            # First line, plus the first lockstep frame of a backtrace if any.
            frames = [l.split(": ", 1)[-1] for l in err.splitlines() if "lockstep_" in l and ": " in l]
            f["stderr"] = (err.splitlines()[0][:200] if err else "") + (f" (in {frames[0]})" if frames else "")
            try:
                f["diags"] = json.load(open(os.path.join(res, idx + ".json")))["diagnostics"]
                bad_json = False
            except (ValueError, KeyError):
                f["diags"], bad_json = [], not f["timeout"]
            # Over the --mem cap, Rust aborts with "memory allocation of N bytes failed".
            f["oom"] = not f["timeout"] and f["rc"] != 0 and "memory allocation" in err
            f["crash"] = not f["oom"] and ((not f["timeout"] and f["rc"] not in (0, 1)) or bad_json or any(
                d["rule"] == "internal-error" for d in f["diags"]))
            files.append(f)

    checked_lines = sum(f["lines"] for f in files)
    done = [f for f in files if not f["timeout"]]

    # A header's diagnostics come back once per file that includes it: count
    # each (place, rule, message) once, remembering how many files showed it.
    uniq = {}
    raw_per_rule = collections.Counter()
    for f in files:
        for d in f["diags"]:
            raw_per_rule[d["rule"]] += 1
            key = (d["path"], d["line"], d["column"], d["rule"], d["message"])
            if key not in uniq:
                uniq[key] = dict(d, seen_in=0)
            uniq[key]["seen_in"] += 1
    udiags = list(uniq.values())
    per_rule = collections.Counter(d["rule"] for d in udiags)
    findings = [d for d in udiags if d["rule"] in finding_rules and d["severity"] in ("error", "warning")]
    flagged = [f for f in files if any(d["rule"] in finding_rules and d["path"] == f["abs"] for d in f["diags"])]
    unsupported = collections.Counter(d["message"] for d in udiags if d["rule"] == "unsupported")
    n_unsupported = sum(unsupported.values())
    missing_inc = collections.Counter(
        "system <...>" if "<" in d["message"] else "project \"...\"" for d in udiags if d["rule"] == "include-not-found")

    walls = [f["wall_s"] for f in files]
    slowest = sorted(files, key=lambda f: -f["wall_s"])[:5]
    summary = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "commit": a.commit,
        "packages": packages,
        "timeout_s": a.timeout,
        "languages": {k: census[k] for k in sorted(census)},
        "not_checked": {k: census[k]["files"] for k in sorted(census) if k not in checked},
        "checked_files": len(files),
        "checked_lines": checked_lines,
        "mem_cap_mib": a.mem,
        "timeouts": [f["file"] for f in files if f["timeout"]],
        "out_of_memory": [f["file"] for f in files if f["oom"]],
        "crashes": [{"file": f["file"], "rc": f["rc"], "stderr": f["stderr"]} for f in files if f["crash"]],
        "time_s": {"max": max(walls), "p99": pct(walls, 99), "median": statistics.median(walls), "total": sum(walls)}
        if walls else {},
        "slowest": [{"file": f["file"], "wall_s": f["wall_s"], "timeout": f["timeout"], "oom": f["oom"]}
                    for f in slowest],
        "peak_rss_mib_max": max((f["rss_mib"] for f in files), default=0),
        "diagnostics_per_rule_unique": dict(per_rule.most_common()),
        "diagnostics_per_rule_raw": dict(raw_per_rule.most_common()),
        "findings_unique": len(findings),
        "findings_per_kloc": 1000 * len(findings) / checked_lines if checked_lines else 0,
        "files_flagged": len(flagged),
        "files_flagged_share": len(flagged) / len(files) if files else 0,
        "unsupported_unique": n_unsupported,
        "unsupported_per_5kloc": 5000 * n_unsupported / checked_lines if checked_lines else 0,
        "unsupported_top": unsupported.most_common(20),
        "include_not_found": dict(missing_inc),
    }

    out = []
    p = out.append
    p(f"lockstep corpus run {summary['date']} at {a.commit}: {', '.join(packages)}")
    p("files by language (whole tree):")
    for k, c in summary["languages"].items():
        p(f"  {k:7} {c['files']:5} files {c['lines']:8} lines" + ("" if k in checked else "   (not checked in this run)"))
    p(f"checked: {len(files)} files, {checked_lines} lines; timeouts ({a.timeout:g} s): {len(summary['timeouts'])}; "
      f"out of memory ({a.mem} MiB cap): {len(summary['out_of_memory'])}; crashes: {len(summary['crashes'])}")
    for c in summary["crashes"]:
        p(f"  crash rc={c['rc']} {c['file']}: {c['stderr']}")
    if walls:
        t = summary["time_s"]
        p(f"time per file: max {t['max']:.2f} s, p99 {t['p99']:.2f} s, median {t['median']:.2f} s, total {t['total']:.1f} s")
    p("slowest:")
    for f in slowest:
        p(f"  {f['wall_s']:7.2f} s {'TIMEOUT ' if f['timeout'] else 'OUT OF MEMORY ' if f['oom'] else ''}{f['file']}")
    p(f"peak RSS max: {summary['peak_rss_mib_max']:.0f} MiB")
    p("diagnostics per rule (unique place+message; raw count over all files in brackets):")
    for r, n in per_rule.most_common():
        p(f"  {n:6} [{raw_per_rule[r]:6}] {r}")
    p(f"findings: {len(findings)} unique, {summary['findings_per_kloc']:.2f} per 1000 lines; "
      f"files flagged (a finding in the file itself): {len(flagged)}/{len(files)} = {100 * summary['files_flagged_share']:.0f} %")
    p(f"unsupported notes: {n_unsupported} unique, {summary['unsupported_per_5kloc']:.1f} per 5000 lines; top 20:")
    for msg, n in summary["unsupported_top"]:
        p(f"  {n:6} {msg}")
    p(f"include-not-found: {dict(missing_inc)}")
    text = "\n".join(out) + "\n"
    print(text, end="")
    open(os.path.join(a.corpus, "summary.txt"), "w").write(text)
    for name in ["summary.json"] + ([f"summary-{a.commit}.json"] if a.commit else []):
        with open(os.path.join(a.corpus, name), "w") as j:
            json.dump(summary, j, indent=1)

    # Sampled findings, a fixed seed, up to N per rule, for a human to judge.
    rng = random.Random(a.seed)
    lines_cache = {}

    def context(path, line, before=3, after=3):
        if path not in lines_cache:
            try:
                lines_cache[path] = open(path, errors="replace").read().splitlines()
            except OSError:
                lines_cache[path] = []
        src = lines_cache[path]
        lo, hi = max(1, line - before), min(len(src), line + after)
        return [f"{'>' if n == line else ' '}{n:6} | {src[n - 1]}" for n in range(lo, hi + 1)]

    s = [f"sampled findings: seed {a.seed}, up to {a.sample} per rule, commit {a.commit}\n"]
    by_rule = collections.defaultdict(list)
    for d in sorted(findings, key=lambda d: (d["rule"], d["path"], d["line"], d["column"], d["message"])):
        by_rule[d["rule"]].append(d)
    for rule in finding_rules:
        pool = by_rule.get(rule, [])
        if not pool:
            continue
        pick = rng.sample(pool, min(a.sample, len(pool)))
        s.append(f"{'=' * 100}\n{rule}: {len(pick)} of {len(pool)} unique\n")
        for k, d in enumerate(pick, 1):
            s.append(f"--- {rule} #{k}: {rel(d['path'])}:{d['line']}:{d['column']} [{d['severity']}] "
                     f"(shown in {d['seen_in']} checked files)")
            s.append(f"    {d['message']}")
            for n in d.get("notes", []):
                s.append(f"    note: {n}")
            s.extend(context(d["path"], d["line"]))
            for l in d.get("labels", []):
                s.append(f"  label {rel(l['path'])}:{l['line']}: {l['message']}")
                if l["path"] != d["path"] or abs(l["line"] - d["line"]) > 3:
                    s.extend(context(l["path"], l["line"], 2, 2))
            s.append("")
    open(os.path.join(a.corpus, "sample.txt"), "w").write("\n".join(s) + "\n")
    print(f"sampled findings: {os.path.join(a.corpus, 'sample.txt')}; summary: {os.path.join(a.corpus, 'summary.json')}")


if __name__ == "__main__":
    main()
