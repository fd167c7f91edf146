#!/usr/bin/env python3
"""pySigma side of detflow's differential conformance test and Sigma benchmark.

Reads one JSON request on stdin and writes one JSON response on stdout. Request:

    {
      "mode": "convert" | "bench",
      "rules": [{"path": "...", "text": "<yaml>" (optional, read from path otherwise),
                 "events": [{...}, ...] (optional), "columns": ["Field", ...] (optional)}],
      "placeholders": {"name": ["value", ...]},   # values for |expand placeholders
      "rounds": 3                                 # bench only
    }

mode "convert": every rule is converted with pySigma to SQLite SQL, SPL, ES|QL and KQL (Kusto), each
with its own error; when the rule carries "events", the SQLite query is run on those events and the
indexes of the matching events are returned ("verdicts").

mode "bench": the rules are parsed once (not timed) and converted to the five targets detflow's
bench converts to (SQL, SPL, ES|QL, Lucene, KQL); only the conversion loop is timed, so interpreter
start-up and imports are excluded. The best of "rounds" passes is reported.

Why the SQLite backend and not pySigma-backend-duckdb: the SQLite backend is the reference SQL
backend of the pySigma organisation, it targets a documented table layout (Zircolite: one TEXT
COLLATE NOCASE column per flattened field, absent fields NULL, REGEXP bound to Python's re.search),
it folds SQL three-valued logic back to Sigma's two at every NOT, and it applies no field mapping.
pySigma-backend-duckdb 0.1.4 installs a Splunk/Sysmon field-renaming pipeline by default, emits NOT
without NULL handling (so "selection and not filter" never matches an event lacking the filter
field) and requires pySigma < 2. Running the SQLite query on the layout it was written for is the
most faithful way to obtain pySigma's verdicts; the same rows and columns are loaded into DuckDB for
detflow's SQL.
"""

import copy
import json
import re
import sqlite3
import sys
import time
from importlib import metadata

from sigma.backends.elasticsearch import ESQLBackend, LuceneBackend
from sigma.backends.kusto import KustoBackend
from sigma.backends.splunk import SplunkBackend
from sigma.backends.sqlite import sqliteBackend
from sigma.collection import SigmaCollection
from sigma.processing.pipeline import ProcessingPipeline
from sigma.rule import SigmaRule

TABLE = "logs"
# Backends compared in the conformance test, by the name detflow uses for its own output.
CONFORMANCE_BACKENDS = {
    "sql": sqliteBackend,
    "splunk": SplunkBackend,
    "esql": ESQLBackend,
    "kql": KustoBackend,
}
# The five targets detflow's bench converts every rule to.
BENCH_BACKENDS = [sqliteBackend, SplunkBackend, ESQLBackend, LuceneBackend, KustoBackend]


def placeholder_pipeline(placeholders):
    """A pipeline that substitutes |expand placeholders, so both engines see the same values."""
    if not placeholders:
        return None
    return ProcessingPipeline.from_dict(
        {
            "name": "detflow conformance placeholders",
            "priority": 10,
            "vars": placeholders,
            "transformations": [{"id": "placeholders", "type": "value_placeholders"}],
        }
    )


def make_backend(cls, pipeline):
    # pySigma pipelines are stateful while a rule is converted, so each backend gets its own copy.
    return cls(processing_pipeline=copy.deepcopy(pipeline)) if pipeline else cls()


def describe(error):
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"


def detection_rules(text):
    """The detection rules of one YAML text; correlation rules and filters are not converted."""
    collection = SigmaCollection.from_yaml(text)
    rules = [r for r in collection.rules if isinstance(r, SigmaRule)]
    if not rules:
        raise ValueError("no detection rule in document")
    for r in rules:
        # pySigma collects rule errors instead of raising when the collection is loaded leniently.
        if r.errors:
            raise r.errors[0]
    return rules


def quote_ident(name):
    return '"' + name.replace('"', '""') + '"'


def regexp(pattern, value):
    """SQLite's REGEXP, as Zircolite (the consumer of this backend's output) defines it."""
    if value is None:
        return 0
    return 1 if re.search(pattern, str(value)) else 0


def to_cell(value):
    # Zircolite's flattener stores every value as text in a TEXT COLLATE NOCASE column.
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def run_sql(query, columns, events):
    """Indexes of the events the SQLite query selects, on a Zircolite-layout in-memory table."""
    prefix = f"SELECT * FROM {TABLE} WHERE "
    if not query.startswith(prefix):
        raise ValueError(f"unexpected query shape: {query[:80]}")
    con = sqlite3.connect(":memory:")
    try:
        con.create_function("regexp", 2, regexp, deterministic=True)
        cols = ", ".join(f"{quote_ident(c)} TEXT COLLATE NOCASE" for c in columns)
        con.execute(f"CREATE TABLE {TABLE} (detflow_event_index INTEGER, {cols})")
        placeholders = ", ".join("?" for _ in range(len(columns) + 1))
        con.executemany(
            f"INSERT INTO {TABLE} VALUES ({placeholders})",
            [[i] + [to_cell(e.get(c)) for c in columns] for i, e in enumerate(events)],
        )
        rows = con.execute(
            f"SELECT detflow_event_index FROM {TABLE} WHERE " + query[len(prefix):]
        ).fetchall()
        return sorted(r[0] for r in rows)
    finally:
        con.close()


def convert(request):
    pipeline = placeholder_pipeline(request.get("placeholders"))
    results = []
    for item in request["rules"]:
        text = item.get("text")
        if text is None:
            with open(item["path"], encoding="utf-8") as f:
                text = f.read()
        result = {"path": item["path"]}
        try:
            rules = detection_rules(text)
        except Exception as e:  # every pySigma failure is reported per rule, never fatal
            result["error"] = describe(e)
            results.append(result)
            continue
        for name, cls in CONFORMANCE_BACKENDS.items():
            try:
                queries = []
                for rule in rules:
                    queries.extend(make_backend(cls, pipeline).convert_rule(copy.deepcopy(rule)))
                result[name] = {"queries": queries}
            except Exception as e:
                result[name] = {"error": describe(e)}
        if "events" in item and "queries" in result["sql"]:
            try:
                matched = set()
                for q in result["sql"]["queries"]:
                    matched.update(run_sql(q, item["columns"], item["events"]))
                result["verdicts"] = sorted(matched)
            except Exception as e:
                result["sql_runtime_error"] = describe(e)
        results.append(result)
    return {"results": results}


def bench(request):
    pipeline = placeholder_pipeline(request.get("placeholders"))
    parsed = []
    for item in request["rules"]:
        text = item.get("text")
        if text is None:
            with open(item["path"], encoding="utf-8") as f:
                text = f.read()
        try:
            parsed.extend(detection_rules(text))
        except Exception:
            pass  # a rule pySigma cannot even parse is counted as not converted
    rounds = int(request.get("rounds", 3))
    best = None
    converted = failed = 0
    for _ in range(rounds):
        # Rules are copied and backends built outside the timed region: pipelines mutate rules.
        work = [(make_backend(cls, pipeline), [copy.deepcopy(r) for r in parsed]) for cls in BENCH_BACKENDS]
        ok = bad = 0
        start = time.perf_counter()
        for backend, rules in work:
            for rule in rules:
                try:
                    backend.convert_rule(rule)
                    ok += 1
                except Exception:
                    bad += 1
        seconds = time.perf_counter() - start
        if best is None or seconds < best:
            best, converted, failed = seconds, ok, bad
    return {
        "bench": {
            "rules": len(request["rules"]),
            "parsed": len(parsed),
            "backends": [cls.__name__ for cls in BENCH_BACKENDS],
            "seconds": best,
            "rules_per_second": len(parsed) / best if best else 0.0,
            "converted": converted,
            "failed": failed,
        }
    }


def versions():
    names = [
        "pysigma",
        "pysigma-backend-sqlite",
        "pysigma-backend-splunk",
        "pysigma-backend-elasticsearch",
        "pysigma-backend-kusto",
    ]
    out = {}
    for n in names:
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            out[n] = None
    out["sqlite"] = sqlite3.sqlite_version
    out["python"] = sys.version.split()[0]
    return out


def main():
    request = json.load(sys.stdin)
    mode = request.get("mode", "convert")
    if mode == "convert":
        response = convert(request)
    elif mode == "bench":
        response = bench(request)
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    response["versions"] = versions()
    json.dump(response, sys.stdout)


if __name__ == "__main__":
    main()
