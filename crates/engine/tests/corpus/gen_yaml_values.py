#!/usr/bin/env python3
"""Regrows yaml_values.jsonl: how Cluster API reads rendered template output.

Each case is a text as a `valueFrom.template` or `enabledIf` could render it. The oracle
(see ../../../../../shared/oracle/README.md; ORACLE points at a built binary) answers with
the JSON value Kubernetes' YAML reader makes of it (`value`, or `error`: its error text
when it refuses the text) and whether `enabledIf` would be on (`enabled`). A text without template
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
    # issue 19: YAML 1.1 booleans as keys (JSON keys "true"/"false"; a repeated key keeps
    # its last value)
    "y: 1\nn: 2\nyes: 3\nno: 4\non: 5\noff: 6\n", "Y: a\nTrue: b\n", "On: x", "? y\n: 1", "{y: 1, n: 2}",
    "[{y: n}]", "a:\n  no: off\n", "N: [Yes, NO]", "'y': 1", "\"on\": off", "true: a\nyes: b", "yEs: 1",
    # block scalars and their chomping
    "|+\n  keep\n\n\n", "|-\n  strip\n\n", "|\n  clip\n\n\n", ">\n  folded\n  text\n\n  para\n",
    ">-\n  folded\n  text\n", ">+\n  folded\n  text\n\n", "|2\n   indented\n", "a: |\n  x\nb: >\n  y\n  z\n",
    "- |\n  a\n- >-\n  b\n", ">\n  a\n    more indented\n  b\n", "|\n  \n  text\n", "key: >-\n  x\n\n  y\n",
    "|1-\n  x", "a: |+\n  x\n\nb: 1\n", ">\n\n  lead\n", "|\n  trailing spaces  \n", "|", ">-", "a: |\n",
    "- >\n   one\n   two\n- |-\n   three\n", "|\n  tab\there\n", "|\n  # not a comment\n",
    # numbers too large for float64, and other number spellings of YAML 1.1 in Go
    "-1e400", "a: 1e400", "[1e400, 2]", "1e400: x", "1e-400", "1e308", "1.7976931348623157e308",
    "1.7976931348623159e308", "08", "09.5", "0b101", "-0b101", "0B11", "0o17", "0O17", "0x_1F", "0X1F", "+0x1F",
    "1_000.5", ".5_0", "._5", "0x1p3", "-0", "-0.0", "+.inf", ".Inf", "a: .nan", "-.INF", "[.inf]", ".NaN: x",
    "9223372036854775808", "18446744073709551615", "18446744073709551616", "-9223372036854775809", "1:30",
    "190:20:30", "0.", "+.5", "1e", "e3", "0x", "0b", "-", "+", ".", "1__0", "_1",
    # keys that are not strings
    "1.5: a", "0.1234567891: a", "1e6: a", "1.5e3: a", "12345678901234567890: a", "null: x", "~: x",
    "[1,2]: x", "? {a: 1}\n: x", "? [a]\n: x", "2001-12-14: a", ".inf: a", "-.inf: a", "1e3: a", "0x10: a",
    "-5: a", "a:\n  1: [b]\n", "'1': a", "!!str 1: a", "!!int '7': a",
    # tags
    "!!str 1", "!!int abc", "!!float 3", "!foo 3", "!!binary aGVsbG8=", "!!null x", "!!bool yes", "!!int 0x1F",
    "!!bool maybe", "!!float abc", "!!timestamp 2001-12-14", "!!timestamp 5", "!!timestamp abc", "!!str",
    "!!null", "!!null ~", "! 3", "! true", "!!map {a: 1}", "!!seq [1]", "!!str [1]", "!!binary '!!!'",
    "!!binary /w==", "!!int 1_000", "!!float 1e400", "!!int 1e3", "!!float 0x10", "!<tag:yaml.org,2002:int> 3",
    "!!set {a, b}", "!!omap [a: 1]", "'x' !!str", "!!str 'a'",
    # merge keys
    "<<: {a: 1}\nb: 2", "a: 1\n<<: {a: 2}", "<<: {a: 2}\na: 1", "<<: [{a: 1}, {a: 2}]", "<<: 1", "<<: [1]",
    "<<: [{a: 1}, 2]", "x: &m {a: 1}\ny:\n  <<: *m\n  b: 2", "'<<': {a: 1}", "x: &s 1\ny:\n  <<: *s",
    "<<: {a: 1}\n<<: {b: 2}", "x: &m {a: 1}\ny:\n  <<: [*m, {b: 2}]", "<<: ~", "<<: []", "!!merge <<: {a: 1}",
    "x: &l [1]\ny:\n  <<: *l", "<<: {<<: {a: 1}}",
    # anchors and aliases
    "a: &x [1]\nb: *x", "a: *nope", "&a [*a]", "a: &a {b: *a}", "&a x", "a: &x 1\nb: *x\nc: &x 2\nd: *x",
    "? &k key\n: *k", "a: &x\nb: *x", "- &x ~\n- *x",
    # documents and directives
    "a\n---\n[", "---\n- 1\n---\n- 2", "--- |\n  x\n", "--- >\n a\n b\n", "%YAML 1.1\n---\na",
    "%YAML 1.2\n---\nyes", "%FOO bar\n---\na", "...\n", "--- a\n...\n--- b\n",
    # strings
    "'it''s'", "\"\\u00e9\"", "\"\\x41\"", "\"\\N\"", "\"\\_\"", "\"a\\\n  b\"", "plain\n  continued",
    "a: 'multi\n  line'", "\"\\ud83d\\ude00\"", "\"\\q\"", "'\ta'", "a b: c d", "a:b", "a: b:c",
    "http://x.y/z", "- -1", "- - x", "[a, b, ]", "{a: 1, }", "[a: 1]", "{a, b: 2}", "? a", "?", ": a",
    "a: b #c\nd: e", "a: [b, c] # x", "%", "@x", "`x", "a: @", "a: `", "*", "&", "!", "|x", "> x",
    # tabs: white space after ':' and inside flows, but not where a block token may start
    "a:\tb", "a: \tb", "- \ta", "a: b\t# c", "a: b\t", "\ta: b", "a:\n  \tb: c", "[a,\tb]", "{a:\tb}",
    "a: |\n \tx\n", "a: 'x\ty'", "\t", "a:\t", "a: b\n\t", "\n\t\n", "a: [1,\n\t2]", "- a\n-\tb",
    "? \ta\n: b", "a: b\n\tc: d",
]


def main():
    oracle = os.environ.get("ORACLE")
    if not oracle:
        sys.exit("set ORACLE to the oracle binary")
    requests = [json.dumps({"op": "template", "template": text, "data": {}}) for text in CASES]
    out = subprocess.run([oracle], input="\n".join(requests) + "\n", capture_output=True,
                         text=True, check=True).stdout.split("\n")
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "yaml_values.jsonl"), "w") as f:
        for text, line in zip(CASES, out):
            answer = json.loads(line)
            if not answer.get("ok") or answer.get("out") != text:
                sys.exit(f"unexpected oracle answer for {text!r}: {line}")
            case = {"text": text, "enabled": answer["enabled"]}
            if "value_error" in answer:
                case["error"] = answer["value_error"]
            else:
                case["value"] = answer["value"]
            f.write(json.dumps(case) + "\n")


if __name__ == "__main__":
    main()
