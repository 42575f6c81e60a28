#!/usr/bin/env python3
"""fidelity_table.py LIST: the markdown table of tests/kernel_fidelity.sh.

LIST has a line per case: its name, the path of `dlsim diff DES KERNEL --json` (A is
the DES twin, B the kernel run) and, optionally, that of `dlsim diff KERNEL2 KERNEL
--json` (the kernel against a second boot of itself: its agreement is the noise floor;
"-" for none) and that of `dlsim diff REPLAY KERNEL --json` (the replay twin, `dlsim
twin`: every callback as long as in the kernel run, so what differs is the engine's
scheduling and cost model alone), and that of the model twin given the boot's own sleep
overshoot ("-" for none).  Per op (occurrences numbered as diff numbers
them: suspend, suspend#2, ...): both makespans, DES/kernel, the pairs both runs order
with a gap above the tolerance, the share ordered the same way, and the first
disagreeing pairs ("x<y" is the DES's order; the kernel ran y first).  Ops with no
callbacks in either run (unbind without a remove callback, say) are left out.  The
summary splits the pairs into those a dependency orders (a rule fixes their order) and
those only timing orders; a last table gives per case each twin (and a second boot)
against the kernel run: pairs, probe, suspend, resume and phases (print_summary()).
"""
import json
import sys

SHOW_PAIRS = 3
TARGET = 0.05              # the 5%
PHASE_MIN_NS = 10_000_000  # phases of 10 ms or more


def ms(ns):
    return "–" if ns is None or ns < 0 else f"{ns / 1e6:.3f}"


def main(argv):
    if len(argv) != 2:
        print("usage: fidelity_table.py LIST", file=sys.stderr)
        return 2
    cases, summaries = [], []
    with open(argv[1]) as f:
        for line in f:
            f_ = line.split()
            name, path = f_[0], f_[1]
            with open(path) as j:
                d = json.load(j)
            noise, replay, full = {}, {}, {"model": d}
            if len(f_) > 2 and f_[2] != "-":
                with open(f_[2]) as j:
                    full["kernel vs kernel"] = json.load(j)
                noise = {r["op"]: r for r in full["kernel vs kernel"]["rows"] if r["phase"] is None}
            if len(f_) > 3 and f_[3] != "-":
                with open(f_[3]) as j:
                    full["replay"] = json.load(j)
                replay = {r["op"]: r for r in full["replay"]["rows"] if r["phase"] is None}
            if len(f_) > 4 and f_[4] != "-":
                with open(f_[4]) as j:
                    full["model, boot's overshoot"] = json.load(j)
            cases.append((name, d, noise, replay))
            summaries.append((name, full))
    tol = cases[0][1]["tolerance_ns"] / 1e6 if cases else 1.0
    print(f"| case | op | DES ms | kernel ms | DES/kernel | pairs >{tol:g} ms | agreement | kernel vs kernel | replay/kernel | replay agreement | first disagreeing pairs (DES order; kernel the other way) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    worst_ratio, all_pairs, all_same = None, 0, 0
    dep_pairs = dep_same = 0
    dep_known = all(d.get("dependent_pairs") is not None for _, d, _, _ in cases)
    nops = nagree = nwithin = 0
    for name, d, noise, replay in cases:
        by_op = {}
        for p in d["disagreeing"]:
            by_op.setdefault(p["op"], []).append(p)
        for r in d["rows"]:
            if r["phase"] is not None:
                continue
            a, b = r["a_makespan_ns"], r["b_makespan_ns"]
            if not a and not b:
                continue
            ratio = f"{a / b:.3f}" if a is not None and b else "–"
            nops += 1
            nagree += r["same"] == r["pairs"]
            if a is not None and b:
                dev = abs(a / b - 1)
                nwithin += dev <= 0.05
                worst_ratio = dev if worst_ratio is None else max(worst_ratio, dev)
            agree = f"{100 * r['same'] / r['pairs']:.2f}%" if r["pairs"] else "–"
            all_pairs += r["pairs"]
            all_same += r["same"]
            if dep_known:
                dep_pairs += r["dependent_pairs"]
                dep_same += r["dependent_same"]
            shown = by_op.get(r["op"], [])[:SHOW_PAIRS]
            txt = ", ".join(f"{p['first_in_a']}<{p['second_in_a']} ({p['phase']})" for p in shown)
            more = r["pairs"] - r["same"] - len(shown)
            if more > 0:
                txt += f" +{more}"
            nz = noise.get(r["op"])
            kk = f"{100 * nz['same'] / nz['pairs']:.2f}%" if nz and nz["pairs"] else "–"
            rp = replay.get(r["op"])
            ra, rb = (rp["a_makespan_ns"], rp["b_makespan_ns"]) if rp else (None, None)
            rr = f"{ra / rb:.3f}" if ra is not None and rb else "–"
            rg = f"{100 * rp['same'] / rp['pairs']:.2f}%" if rp and rp["pairs"] else "–"
            print(f"| {name} | {r['op']} | {ms(a)} | {ms(b)} | {ratio} | {r['pairs']} | {agree} | {kk} | {rr} | {rg} | {txt} |")
    print()
    if all_pairs:
        print(f"all cases: {all_same} of {all_pairs} pairs ordered the same way "
              f"({100 * all_same / all_pairs:.2f}%), {all_pairs - all_same} disagree")
    if all_pairs and dep_known:
        free, free_same = all_pairs - dep_pairs, all_same - dep_same
        print(f"  pairs a dependency orders: {dep_same} of {dep_pairs} the same way "
              f"({100 * dep_same / max(dep_pairs, 1):.2f}%); pairs only timing orders: "
              f"{free_same} of {free} ({100 * free_same / max(free, 1):.2f}%)")
    print(f"ops whose every pair agrees: {nagree} of {nops}; "
          f"ops whose makespan is within 5% of the kernel's: {nwithin} of {nops}")
    if worst_ratio is not None:
        print(f"largest makespan departure |DES/kernel - 1|: {100 * worst_ratio:.1f}% (target: 5%)")
    print_summary(summaries)
    return 0


def summary_cells(d):
    """pairs, probe, suspend, resume and phases of one diff (A against B, the kernel run)."""
    pairs = same = dep = dep_same = 0
    ratio = {}
    nph = nph_in = 0
    for r in d["rows"]:
        a, b = r["a_makespan_ns"], r["b_makespan_ns"]
        if r["phase"] is not None:
            if a is not None and b and b >= PHASE_MIN_NS:
                nph += 1
                nph_in += abs(a / b - 1) <= TARGET
            continue
        pairs += r["pairs"]
        same += r["same"]
        dep += r.get("dependent_pairs") or 0
        dep_same += r.get("dependent_same") or 0
        if r["op"] in ("probe", "suspend", "resume") and a is not None and b:
            ratio[r["op"]] = a / b
    free, free_same = pairs - dep, same - dep_same
    cell = f"{100 * free_same / free:.2f}%" if free else "–"
    if dep_same != dep:
        cell += f" (dep. {dep - dep_same} differ)"
    out = [cell]
    for op in ("probe", "suspend", "resume"):
        v = ratio.get(op)
        out.append("–" if v is None else f"{v:.3f}" + ("" if abs(v - 1) <= TARGET else " ✗"))
    out.append(f"{nph_in}/{nph}" if nph else "–")
    return out


def print_summary(summaries):
    """The issue's table: case x (replay twin, model twin, kernel vs kernel) x (pairs, probe,
    suspend, resume).  pairs: the share of the pairs only timing orders that come out in the
    kernel run's order (every pair a dependency orders is counted apart, and said when one
    differs); probe, suspend, resume: makespan over the kernel run's (kernel vs kernel: a second
    boot over the first), ✗ beyond 5%; phases: the phases of 10 ms or more within 5%.  "model,
    boot's overshoot": the model twin given the boot's measured sleep overshoot."""
    kinds = ("replay", "model", "model, boot's overshoot", "kernel vs kernel")
    print()
    print("| case | " + " | ".join(f"{k}: {c}" for k in kinds
                                    for c in ("pairs", "probe", "suspend", "resume", "phases")) + " |")
    print("|---|" + "---:|" * (5 * len(kinds)))
    for name, full in summaries:
        cells = []
        for k in kinds:
            cells += summary_cells(full[k]) if k in full else ["–"] * 5
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
