#!/usr/bin/env python3
"""Side-by-side figures for iapguard-bench: what an analyst would use instead.

  side_by_side.py orjson FILE...          orjson.loads over every line of each JSON Lines file
  side_by_side.py duckdb STORE RULES.json  the rules' SQL in DuckDB (2 threads) over the store's views,
                                           exported to Parquet

Prints one JSON object per result line on stdout.
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

from rule_sql import bind


def run_orjson(paths):
    import orjson

    for path in paths:
        size = os.path.getsize(path)
        lines = 0
        start = time.perf_counter()
        with open(path, "rb") as handle:
            for line in handle:
                if line.strip():
                    orjson.loads(line)
                    lines += 1
        seconds = time.perf_counter() - start
        print(json.dumps({"file": path, "bytes": size, "lines": lines, "seconds": seconds}), flush=True)


# The views the rules read (docs/data-contract.md).
VIEWS = ["transactions", "sightings", "orders", "credits", "notifications", "refunds", "apps", "catalog",
         "testers", "fx_rates", "findings", "unchecked_transactions"]


def export_with_python(source, view, csv_path):
    """The view as CSV (NULL as \\N, a header row) through Python's sqlite3; returns its row count."""
    import csv

    cursor = source.execute(f"SELECT * FROM {view}")
    columns = [d[0] for d in cursor.description]
    with open(csv_path, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(columns)
        count = 0
        for row in cursor:
            writer.writerow(["\\N" if v is None else v for v in row])
            count += 1
    return count


def export_with_cli(cli, store, view, csv_path):
    """The same CSV written by the sqlite3 shell (C, several times faster than Python's csv writer at 10M).

    Returns the row count, or None when the shell failed or wrote nothing (it prints no header for an
    empty result), so the caller falls back to Python.
    """
    with open(csv_path, "wb") as out:
        done = subprocess.run(
            [cli, "-readonly", "-csv", "-header", "-cmd", ".nullvalue \\\\N", store, f"SELECT * FROM {view}"],
            stdout=out, stderr=subprocess.PIPE)
    if done.returncode != 0 or os.path.getsize(csv_path) == 0:
        return None
    # Rows, not lines: a quoted value may hold a newline.
    return sqlite3.connect(store).execute(f"SELECT COUNT(*) FROM {view}").fetchone()[0]


def run_duckdb(store, rules_path):
    import duckdb

    rules = json.load(open(rules_path))
    workdir = tempfile.mkdtemp(prefix="iapguard-duckdb-")
    source = sqlite3.connect(store)
    con = duckdb.connect()
    con.execute("SET threads = 2")
    export_start = time.perf_counter()
    rows_total = 0
    cli = shutil.which("sqlite3")
    for view in VIEWS:
        csv_path = os.path.join(workdir, view + ".csv")
        count = export_with_cli(cli, store, view, csv_path) if cli else None
        if count is None:
            try:
                count = export_with_python(source, view, csv_path)
            except sqlite3.Error as error:
                print(json.dumps({"export": view, "error": str(error)}), flush=True)
                continue
        rows_total += count
        parquet = os.path.join(workdir, view + ".parquet")
        con.execute(
            f"COPY (SELECT * FROM read_csv('{csv_path}', header=true, nullstr='\\N', all_varchar=false, "
            f"sample_size=-1)) TO '{parquet}' (FORMAT parquet)")
        os.remove(csv_path)
    export_seconds = time.perf_counter() - export_start
    load_start = time.perf_counter()
    for view in VIEWS:
        parquet = os.path.join(workdir, view + ".parquet")
        if os.path.exists(parquet):
            con.execute(f"CREATE TABLE {view} AS SELECT * FROM read_parquet('{parquet}')")
    load_seconds = time.perf_counter() - load_start
    print(json.dumps({"export_rows": rows_total, "export_seconds": export_seconds, "load_seconds": load_seconds}),
          flush=True)
    for rule in rules:
        sql = bind(rule["sql"], rule["params"])
        start = time.perf_counter()
        try:
            result = con.execute(sql).fetchall()
            print(json.dumps({"rule": rule["id"], "seconds": time.perf_counter() - start, "rows": len(result)}),
                  flush=True)
        except Exception as error:  # noqa: BLE001 — report whatever DuckDB says
            message = str(error).splitlines()[0][:200]
            print(json.dumps({"rule": rule["id"], "error": message}), flush=True)
    con.close()
    # The Parquet copies of the store are gigabytes at 10M: do not leave them in /tmp.
    shutil.rmtree(workdir, ignore_errors=True)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(64)
    if sys.argv[1] == "orjson":
        run_orjson(sys.argv[2:])
    elif sys.argv[1] == "duckdb":
        run_duckdb(sys.argv[2], sys.argv[3])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(64)


if __name__ == "__main__":
    main()
