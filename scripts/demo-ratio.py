#!/usr/bin/env python3
"""Active hits per injected incident in a demo output folder (`iapguard demo --out DIR`).

An incident is a run of consecutive `expect: hit` lines of one pattern in DIR/truth.jsonl (the generator writes
a scenario's lines together); it is actionable when one of its lines expects a level above informational. An
active hit is a findings.csv row with outcome `hit`, a level above informational and status new or recurring.
Prints the ratio, the inconclusive rows and, per pattern, rows vs incidents (rows attributed by matching
transaction, original transaction, order or user ids against the pattern's truth lines).

usage: scripts/demo-ratio.py DIR [--max-ratio 1.3]   (exit 1 when the ratio is above --max-ratio)
"""
import csv
import glob
import json
import os
import sys


def incidents(truth_path):
    out, previous = [], None
    with open(truth_path, encoding="utf-8") as f:
        for raw in f:
            line = json.loads(raw)
            pattern = line.get("pattern")
            if line.get("expect") == "hit":
                if pattern == previous and out and out[-1]["pattern"] == pattern:
                    out[-1]["lines"].append(line)
                else:
                    out.append({"pattern": pattern, "lines": [line]})
            previous = pattern
    return out


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 64
    folder = args[0]
    limit = float(args[args.index("--max-ratio") + 1]) if "--max-ratio" in args else None
    found = sorted(glob.glob(os.path.join(folder, "reports", "*", "findings.csv")))
    if not found:
        print(f"{folder}: no reports/*/findings.csv", file=sys.stderr)
        return 66
    with open(found[-1], newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    active = [
        r for r in rows
        if r["outcome"] == "hit" and r["level"] != "informational" and r["status"] in ("new", "recurring")
    ]
    inconclusive = [r for r in rows if r["outcome"] == "inconclusive" and r["status"] in ("new", "recurring")]
    incs = incidents(os.path.join(folder, "truth.jsonl"))
    actionable = [i for i in incs if any(l.get("level") != "informational" for l in i["lines"])]
    ratio = len(active) / len(incs) if incs else float("inf")
    print(f"findings: {found[-1]}")
    print(f"injected incidents {len(incs)} (actionable {len(actionable)}), active hits {len(active)}, "
          f"ratio {ratio:.3f}, inconclusive rows {len(inconclusive)}")

    keys = ("transaction_id", "original_transaction_id", "order_id")
    per_pattern = {}
    for inc in incs:
        per_pattern.setdefault(inc["pattern"], {"incidents": 0, "lines": []})
        per_pattern[inc["pattern"]]["incidents"] += 1
        per_pattern[inc["pattern"]]["lines"] += inc["lines"]
    counted = {p: 0 for p in per_pattern}
    unmatched = 0
    for r in active:
        owner = None
        for pattern, data in per_pattern.items():
            for l in data["lines"]:
                if any(l.get(k) and l.get(k) == r[k] for k in keys) or (
                    l.get("user_id") and not r["transaction_id"] and l["user_id"] == r["user_id"]
                ):
                    owner = pattern
                    break
            if owner:
                break
        if owner:
            counted[owner] += 1
        else:
            unmatched += 1
    for pattern in sorted(per_pattern, key=lambda p: counted[p] - per_pattern[p]["incidents"], reverse=True):
        print(f"  {pattern:32} rows {counted[pattern]:4}  incidents {per_pattern[pattern]['incidents']:4}")
    print(f"  {'(matching no hit line)':32} rows {unmatched:4}")
    if limit is not None and ratio > limit:
        print(f"ratio {ratio:.3f} above {limit}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
