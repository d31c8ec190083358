#!/usr/bin/env python3
"""Regenerates oracle.jsonl: the schema (capi and crd modes) and default requests of the
shared oracle corpus, each with the oracle's answer, as raw JSON text (number literals
such as 1e400 must survive untouched).

Usage: python3 extract.py [REGRESS_DIR]   (default: /work/shared/oracle/regress)

Left out: lines that are not JSON, ops other than schema/default, schema requests in an
unknown mode, and requests the oracle rejects at the protocol level (stage "request"):
those test the oracle's own request decoding, not variable validation.
"""
import json
import os
import sys

src = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/oracle/regress"
here = os.path.dirname(os.path.abspath(__file__))
out_path = os.path.join(here, "oracle.jsonl")

kept = 0
with open(os.path.join(src, "corpus.jsonl")) as requests, \
        open(os.path.join(src, "expected.jsonl")) as answers, \
        open(out_path, "w") as out:
    for n, (req, ans) in enumerate(zip(requests, answers), start=1):
        req, ans = req.rstrip("\n"), ans.rstrip("\n")
        try:
            r = json.loads(req)
            a = json.loads(ans)
        except ValueError:
            continue
        op = r.get("op")
        if op not in ("schema", "default"):
            continue
        if op == "schema" and r.get("mode", "capi") not in ("capi", "crd"):
            continue
        if a.get("stage") == "request":
            continue
        out.write(json.dumps({"line": n, "request": req, "expected": ans},
                             ensure_ascii=False, separators=(",", ":")) + "\n")
        kept += 1
print(f"wrote {kept} cases to {out_path}")
