#!/usr/bin/env python3
"""Regrows yaml_values.jsonl: how Cluster API reads rendered template output.

Each case is a text as a `valueFrom.template` or `enabledIf` could render it. The oracle
(see ../../../../../shared/oracle/README.md; ORACLE points at a built binary) answers with
the JSON value Kubernetes' YAML reader makes of it (`value`, or `value_error` when it does
not parse) and whether `enabledIf` would be on (`enabled`). A text without template
actions renders as itself, so the oracle's `template` operation reads it unchanged.

    ORACLE=/path/to/oracle python3 gen_yaml_values.py
"""
import json
import os
import subprocess
import sys

CASES = [
    # booleans, YAML 1.1 spellings
    "true", "True", "TRUE", "false", "False", "FALSE", "yes", "Yes", "YES", "no", "No", "NO",
    "on", "On", "ON", "off", "Off", "OFF", "y", "Y", "n", "N", " true\n", "\ntrue\n\n", "'true'", '"true"',
    "tRUE", "yEs",
    # null
    "", " ", "\n", "~", "null", "Null", "NULL", "nUll",
    # integers
    "0", "1", "-1", "+1", "007", "010", "0x1F", "0o17", "0b101", "1_000", "12345678901234567890",
    "-9223372036854775808", "9223372036854775807", "9223372036854775808",
    # floats
    "1.0", "1.5", ".5", "-.5", "1e3", "1E3", "1.2e-3", "6.02e+23", ".inf", "-.inf", ".nan", "1.", "3.14159265358979323846",
    "100000000000000000000000", "1e400",
    # strings
    "abc", "kindest/node:v1.30.0", "v1.30.0", "<no value>", "a b c", "registry.k8s.io", "'quoted'",
    '"double \\"escaped\\""', "a: b: c", "- a", "key: value", "3.5.12-0", "10.128.0.0/12", "@at",
    "`tick", "%percent", "!!str 1", "!!int 3", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "12:30",
    "1:30:00", "0.0.0.0", "null value", "# only a comment", "a # trailing comment",
    # block scalars
    "|\n  line1\n  line2\n", ">\n  folded\n  text\n", "|-\n  no newline\n", "key: |\n  multi\n  line\n",
    # collections
    "- 3\n- 4", "[1, 2, 3]", "{a: 1, b: [x, y]}", "a: 1\nb:\n  c: true\n  d: [1, \"2\"]\n",
    "local:\n  imageTag: 3.5.12-0\n", "local:\n  imageTag: \n", "imageTag: v1.11.1\n",
    "- name: admission-pss\n  readOnly: true\n  pathType: File\n", "[]", "{}", "- \n- a", "a:\n",
    "1: one\n2: two\n", "true: yes\n", "null: x\n", "? complex\n: value\n",
    "a: &x 1\nb: *x\n", "base: &b {x: 1}\nderived:\n  <<: *b\n  y: 2\n",
    # several documents, odd spacing
    "a\n---\nb", "---\nfoo\n", "---\n", "a: 1\n...\n", "\ta", "a:\n\t- b",
    # invalid
    "a: [1", "{a: 1", "a: b\n c", "key: value\nkey: other\n", "- a\nb: c", "'unterminated", "a: 'x'y",
]


def main():
    oracle = os.environ.get("ORACLE")
    if not oracle:
        sys.exit("set ORACLE to the oracle binary")
    requests = [json.dumps({"op": "template", "template": text, "data": {}}) for text in CASES]
    out = subprocess.run([oracle], input="\n".join(requests) + "\n", capture_output=True,
                         text=True, check=True).stdout.splitlines()
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "yaml_values.jsonl"), "w") as f:
        for text, line in zip(CASES, out):
            answer = json.loads(line)
            if not answer.get("ok") or answer.get("out") != text:
                sys.exit(f"unexpected oracle answer for {text!r}: {line}")
            case = {"text": text, "enabled": answer["enabled"]}
            if "value_error" in answer:
                case["error"] = True
            else:
                case["value"] = answer["value"]
            f.write(json.dumps(case) + "\n")


if __name__ == "__main__":
    main()
