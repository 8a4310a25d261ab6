"""Reads a CSV file with Python's csv module (the way BI tools and pandas do) and prints the rows as JSON."""
import csv
import json
import sys

with open(sys.argv[1], newline="", encoding="utf-8", errors="strict") as f:
    rows = list(csv.reader(f, strict=True))
print(json.dumps(rows))
