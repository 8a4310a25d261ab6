"""The rules' SQL for DuckDB: SQLite-style :name parameters replaced by literals.

Shared by side_by_side.py (DuckDB over the store's views) and peer_pipeline.py (the whole-pipeline peer).
iapguard-bench writes the rules as JSON ({"id", "sql", "params"}) with every parameter already bound the way
iapguard binds it (defaults, the config's rule_params, now, since, reference_currency).
"""
import re


def sql_literal(value):
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        # SQLite integers are 64-bit; a bare literal is INT32 in DuckDB (30 * 86400000 would overflow).
        return f"CAST({value} AS BIGINT)"
    if isinstance(value, float):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def bind(sql, params):
    """Replaces :name parameters (SQLite style) with literals; unknown names are left as they are."""

    def replace(match):
        name = match.group(1)
        if name in params:
            return sql_literal(params[name])
        return match.group(0)

    return re.sub(r"(?<![:\w]):([A-Za-z_][A-Za-z0-9_]*)", replace, sql)
