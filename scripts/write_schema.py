"""Regenerate the parts of tb_gpu_advisor/schema.json that the code declares, so that nothing is written
twice (tests/test_schema.py fails when they differ; then run this, and `npm run types` in frontend/):

- from the tables' registry (`@table` in tb_gpu_advisor/tables/): the tables' names (`TableName`), each
  table's row type (`KernelRow`, ...), the rows `TableResponse` may hold and the fields a table adds to
  its answer;
- from the rank digest (`HostDigest`, tb_gpu_advisor/measures/rank.py): `RankMeasures`, and the same
  fields of each rank in a job (`AcrossHosts.ranks`), whose other fields are the job's;
- from the comparison's typed document (tb_gpu_advisor/report/diff_doc.py): `Diff` and `JobDiff`, whole
  (a TypedDict is an object of required keys, `X | None` may be null, `Annotated` strings describe).

    .venv/bin/python scripts/write_schema.py
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import sys
import types
import typing
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tb_gpu_advisor.measures.rank import HostDigest  # noqa: E402
from tb_gpu_advisor.report import diff_doc  # noqa: E402
from tb_gpu_advisor.tables import REGISTRY  # noqa: E402

SCHEMA = os.path.join(ROOT, "tb_gpu_advisor", "schema.json")
# what every table answer has; a table's own fields (`extra`) follow them
ANSWER_FIELDS = ("table", "group", "columns", "rows", "total", "all", "offset", "sort", "order", "notes")


def _json_type(hint: Any) -> dict[str, Any]:
    """The JSON Schema of a field's Python type (the digest's: str, int, float, their optional forms, and
    tuples of them)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        (one,) = inner
        t = _json_type(one)["type"]
        return {"type": [t, "null"]}
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": _json_type(args[0])}
        (first, *_) = args
        if any(a != first for a in args):  # a record of several types: each place its own
            n = len(args)
            return {"type": "array", "prefixItems": [_json_type(a) for a in args], "minItems": n, "maxItems": n}
        return {"type": "array", "items": _json_type(first), "minItems": len(args), "maxItems": len(args)}
    return {"type": {str: "string", int: "integer", float: "number", bool: "boolean"}[hint]}


def digest_properties() -> tuple[dict[str, Any], list[str]]:
    """The rank digest's fields as JSON Schema properties (a field's metadata gives its description, an
    `enum`, or `optional`: not required), and the required ones."""
    hints = typing.get_type_hints(HostDigest)
    props: dict[str, Any] = {}
    required = []
    for f in dataclasses.fields(HostDigest):
        meta = dict(f.metadata)
        doc, optional = meta.pop("doc", None), meta.pop("optional", False)
        schema = meta if "enum" in meta else _json_type(hints[f.name])
        if doc:
            schema = {"type": schema["type"], "description": doc, **{k: v for k, v in schema.items() if k != "type"}}
        props[f.name] = schema
        if not optional:
            required.append(f.name)
    return props, required


TYPED = {"Diff": diff_doc.Diff, "JobDiff": diff_doc.JobDiff}  # written whole from their TypedDicts
SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


def _first_paragraph(doc: str | None) -> str | None:
    return " ".join(doc.strip().split("\n\n")[0].split()) if doc else None


def typed_schema(hint: Any, top: Any = None) -> dict[str, Any]:
    """The JSON Schema of a type of the comparison's document; a TypedDict of TYPED other than `top` is
    referenced by name."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        inner, *meta = args
        out = typed_schema(inner, top)
        if diff_doc.Pair in meta:
            out = {"type": "array", "prefixItems": [out["items"], out["items"]], "minItems": 2, "maxItems": 2}
        words = [m for m in meta if isinstance(m, str)]
        return {"description": words[0], **out} if words else out
    if origin in (typing.Union, types.UnionType):
        parts = [typed_schema(a, top) for a in args]
        if all(set(p) == {"type"} and isinstance(p["type"], str) for p in parts):
            return {"type": [p["type"] for p in parts]}
        nullable = [p for p in parts if p != {"type": "null"}]
        if len(nullable) == 1 and set(nullable[0]) >= {"type"} and isinstance(nullable[0]["type"], str):
            return {**nullable[0], "type": [nullable[0]["type"], "null"]}
        return {"oneOf": parts}
    if origin is typing.Literal:
        return {"const": args[0]} if len(args) == 1 else {"enum": list(args)}
    if origin is list:
        return {"type": "array", "items": typed_schema(args[0], top)}
    if typing.is_typeddict(hint):
        name = next((k for k, v in TYPED.items() if v is hint), None)
        if name is not None and hint is not top:
            return {"$ref": f"#/$defs/{name}"}
        hints = typing.get_type_hints(hint, include_extras=True)
        out: dict[str, Any] = {}
        doc = _first_paragraph(hint.__doc__)
        if doc:
            out["description"] = doc
        return out | {
            "type": "object",
            "properties": {k: typed_schema(v, top) for k, v in hints.items()},
            "required": list(hints),
            "additionalProperties": False,
        }
    return {"type": SCALARS[hint]}


def generated(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with its declared parts written from the code."""
    out = copy.deepcopy(schema)
    defs = out["$defs"]
    defs["TableName"] = {"enum": [t.name for t in REGISTRY], "description": "the tables (tb_gpu_advisor/tables/)"}
    for t in REGISTRY:
        defs[t.row_type] = t.row_schema()
    response = defs["TableResponse"]["properties"]
    base = {k: response[k] for k in ANSWER_FIELDS}
    base["table"] = {"$ref": "#/$defs/TableName"}
    base["rows"] = {"type": "array", "items": {"oneOf": [{"$ref": f"#/$defs/{t.row_type}"} for t in REGISTRY]}}
    extra: dict[str, Any] = {}
    for t in REGISTRY:
        extra.update(t.extra)
    defs["TableResponse"]["properties"] = base | extra
    defs["TableLink"]["properties"]["table"] = {"$ref": "#/$defs/TableName"}
    props, required = digest_properties()
    defs["RankMeasures"]["properties"] = props
    defs["RankMeasures"]["required"] = required
    ranks = defs["AcrossHosts"]["properties"]["ranks"]["items"]
    job_props = {k: v for k, v in ranks["properties"].items() if k not in props}
    ranks["properties"] = props | job_props
    ranks["required"] = required + [k for k in ranks["required"] if k not in props]
    for name, hint in TYPED.items():
        defs[name] = typed_schema(hint, hint)
    defs.pop("Verdict", None)  # the checks' verdicts are the comparison's own (`CheckVerdict`)
    return out


def text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    with open(SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    with open(SCHEMA, "w", encoding="utf-8") as f:
        f.write(text(generated(schema)))


if __name__ == "__main__":
    main()
