#!/usr/bin/env python3
"""Regrows quirks.jsonl: Go and Kubernetes corners of variable validation and defaulting
(issue 19) that the shared corpus does not reach, each request with the oracle's answer,
in oracle.jsonl's shape (`line` is the case's number in this file).

    ORACLE=/path/to/oracle python3 quirks.py

The requests are JSON text kept as written, so number literals such as `1e400` or
`12345678901234567890` reach the oracle and the test untouched. Requests of op
`cluster` are ours (see CLUSTER below): the test runs them through the crate's
Cluster-level defaulting and validation.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

CASES = r'''
# schemas without `type`, where Kubernetes allows it
{"op":"schema","name":"v","schema":{"x-kubernetes-int-or-string":true},"value":3}
{"op":"schema","name":"v","schema":{"x-kubernetes-int-or-string":true},"value":"a"}
{"op":"schema","name":"v","schema":{"x-kubernetes-int-or-string":true},"value":1.5}
{"op":"schema","name":"v","schema":{"x-kubernetes-int-or-string":true},"value":true}
{"op":"schema","name":"v","schema":{"x-kubernetes-int-or-string":true},"value":{"a":1}}
{"op":"schema","name":"v","schema":{"x-kubernetes-int-or-string":true},"value":null}
{"op":"schema","name":"v","schema":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]},"value":true}
{"op":"schema","name":"v","schema":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]},"value":"50%"}
{"op":"schema","name":"v","schema":{"x-kubernetes-preserve-unknown-fields":true},"value":{"a":1}}
{"op":"schema","name":"v","schema":{"x-kubernetes-preserve-unknown-fields":true},"value":3}
{"op":"schema","name":"v","schema":{"x-kubernetes-preserve-unknown-fields":true},"value":"s"}
{"op":"schema","name":"v","schema":{"x-kubernetes-preserve-unknown-fields":true},"value":null}
{"op":"schema","name":"v","schema":{"x-kubernetes-preserve-unknown-fields":true,"properties":{"a":{"type":"integer"}}},"value":{"a":"x","b":2}}
{"op":"schema","name":"v","schema":{"x-kubernetes-preserve-unknown-fields":false},"value":{"a":1}}
{"op":"schema","name":"v","schema":{},"value":{"a":1}}
{"op":"schema","name":"v","schema":{},"value":3}
{"op":"schema","name":"v","schema":{"type":"object","properties":{"p":{"x-kubernetes-int-or-string":true}}},"value":{"p":"80%"}}
{"op":"schema","name":"v","schema":{"type":"object","properties":{"p":{"x-kubernetes-int-or-string":true}}},"value":{"p":1.5}}
{"op":"schema","name":"v","schema":{"type":"object","properties":{"p":{"x-kubernetes-preserve-unknown-fields":true}}},"value":{"p":{"x":[1]}}}
{"op":"schema","name":"v","schema":{"type":"object","properties":{"p":{}}},"value":{"p":{"x":[1]}}}
{"op":"schema","name":"v","schema":{"type":"object","properties":{"p":{"x-kubernetes-int-or-string":true,"maxLength":2}}},"value":{"p":"abc"}}
{"op":"schema","name":"v","schema":{"type":"object","properties":{"p":{"x-kubernetes-int-or-string":true,"minimum":5}}},"value":{"p":3}}
{"op":"schema","name":"v","schema":{"type":"array","items":{"x-kubernetes-preserve-unknown-fields":true}},"value":[1,"a",{"b":2}]}
{"op":"schema","name":"v","schema":{"type":"array","items":{"x-kubernetes-int-or-string":true}},"value":[1,"a",{"b":2}]}
{"op":"schema","name":"v","schema":{"x-kubernetes-int-or-string":true,"x-kubernetes-validations":[{"rule":"self != 3"}]},"value":3}
{"op":"schema","name":"v","schema":{"x-kubernetes-preserve-unknown-fields":true,"x-kubernetes-validations":[{"rule":"has(self.a)"}]},"value":{"b":1}}
{"op":"schema","name":"v","schema":{"x-kubernetes-int-or-string":true,"enum":[1,"a"]},"value":2}
{"op":"schema","name":"v","schema":{"x-kubernetes-int-or-string":true,"type":"string"},"value":2}
{"op":"schema","name":"v","schema":{"x-kubernetes-preserve-unknown-fields":true,"type":"object"},"value":{"z":1}}
{"op":"schema","mode":"crd","path":"spec","schema":{"x-kubernetes-int-or-string":true},"value":1.5}
{"op":"schema","mode":"crd","path":"spec","schema":{"x-kubernetes-preserve-unknown-fields":true},"value":[1]}
{"op":"default","name":"v","schema":{"x-kubernetes-int-or-string":true,"default":3}}
{"op":"default","name":"v","schema":{"x-kubernetes-preserve-unknown-fields":true,"default":{"a":1}}}
{"op":"default","name":"v","schema":{"type":"object","properties":{"p":{"x-kubernetes-int-or-string":true,"default":"50%"}}},"value":{}}
{"op":"default","name":"v","schema":{"x-kubernetes-int-or-string":true,"default":"<"}}
{"op":"default","name":"v","schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{"a":{"type":"integer","default":3}}},"value":{"z":"<"}}
# CEL rules where Kubernetes derives no type: skipped with their subtree, or compile errors
{"op":"schema","name":"v","schema":{"type":"object","properties":{"p":{"x-kubernetes-preserve-unknown-fields":true}},"x-kubernetes-validations":[{"rule":"has(self.p)"}]},"value":{"p":1}}
{"op":"schema","name":"v","schema":{"type":"object","properties":{"p":{"x-kubernetes-preserve-unknown-fields":true,"x-kubernetes-validations":[{"rule":"self == 1"}]}}},"value":{"p":2}}
{"op":"schema","name":"v","schema":{"type":"object","properties":{"p":{"x-kubernetes-preserve-unknown-fields":true,"properties":{"q":{"type":"integer","x-kubernetes-validations":[{"rule":"self == 1"}]}}}}},"value":{"p":{"q":2}}}
{"op":"schema","name":"v","schema":{"type":"object","properties":{"p":{"x-kubernetes-int-or-string":true,"x-kubernetes-validations":[{"rule":"self == 1"}]}}},"value":{"p":2}}
{"op":"schema","name":"v","schema":{"type":"array","items":{"x-kubernetes-preserve-unknown-fields":true,"x-kubernetes-validations":[{"rule":"self == 1"}]}},"value":[2]}
{"op":"schema","name":"v","schema":{"type":"array","items":{"x-kubernetes-preserve-unknown-fields":true},"x-kubernetes-validations":[{"rule":"size(self) == 0"}]},"value":[2]}
{"op":"schema","name":"v","schema":{"type":"object","properties":{"l":{"type":"array","items":{"x-kubernetes-preserve-unknown-fields":true},"x-kubernetes-validations":[{"rule":"size(self) == 0"}]}}},"value":{"l":[2]}}
{"op":"schema","name":"v","schema":{"type":"object","additionalProperties":{"x-kubernetes-preserve-unknown-fields":true},"x-kubernetes-validations":[{"rule":"size(self) == 0"}]},"value":{"a":2}}
{"op":"schema","name":"v","schema":{"type":"object","additionalProperties":{"x-kubernetes-preserve-unknown-fields":true,"x-kubernetes-validations":[{"rule":"self == 1"}]}},"value":{"a":2}}
{"op":"schema","name":"v","schema":{"type":"object","properties":{"a-b":{"x-kubernetes-preserve-unknown-fields":true,"x-kubernetes-validations":[{"rule":"self == 1"}]}}},"value":{"a-b":2}}
{"op":"schema","name":"v","schema":{"type":"object","properties":{"p":{"x-kubernetes-preserve-unknown-fields":true},"q":{"type":"integer"}},"x-kubernetes-validations":[{"rule":"self.q == 9"}]},"value":{"p":1,"q":2}}
{"op":"schema","name":"v","schema":{"x-kubernetes-preserve-unknown-fields":true,"type":"object","x-kubernetes-validations":[{"rule":"has(self.a)"}]},"value":{"b":1}}
{"op":"schema","name":"v","schema":{"type":"object","properties":{"p":{"x-kubernetes-preserve-unknown-fields":true,"allOf":[{"x-kubernetes-validations":[{"rule":"self == 1"}]}]}}},"value":{"p":2}}
{"op":"schema","name":"v","schema":{"allOf":[{"x-kubernetes-validations":[{"rule":"self == 1"}]}],"x-kubernetes-preserve-unknown-fields":true},"value":2}
{"op":"default","name":"v","schema":{"x-kubernetes-preserve-unknown-fields":true,"x-kubernetes-validations":[{"rule":"self == 1"}],"default":2}}
{"op":"schema","mode":"crd","path":"spec","schema":{"type":"object","properties":{"p":{"x-kubernetes-preserve-unknown-fields":true,"x-kubernetes-validations":[{"rule":"self == 1"}]}}},"value":{"p":2}}
{"op":"schema","mode":"crd","path":"spec","schema":{"x-kubernetes-preserve-unknown-fields":true,"x-kubernetes-validations":[{"rule":"self == 1"}]},"value":2}
# values in messages: HTML characters, numbers beyond 2^53, integral floats
{"op":"schema","name":"v","schema":{"type":"integer"},"value":"<a&b>"}
{"op":"schema","name":"v","schema":{"type":"string","enum":["x"]},"value":"<a&b>"}
{"op":"schema","name":"v","schema":{"type":"string","pattern":"^x$"},"value":"<a&b>\u2028"}
{"op":"schema","name":"v","schema":{"type":"object","properties":{"a":{"type":"string","maxLength":1}}},"value":{"a":"<>","b&":1}}
{"op":"schema","name":"v","schema":{"type":"integer","maximum":5},"value":12345678901234567890}
{"op":"schema","name":"v","schema":{"type":"integer","maximum":5},"value":9007199254740993}
{"op":"schema","name":"v","schema":{"type":"number","maximum":5},"value":9007199254740993}
{"op":"schema","name":"v","schema":{"type":"number","maximum":5},"value":1e21}
{"op":"schema","name":"v","schema":{"type":"number","maximum":5},"value":1e20}
{"op":"schema","name":"v","schema":{"type":"number","maximum":5},"value":10.0}
{"op":"schema","name":"v","schema":{"type":"integer","maximum":5},"value":10.0}
{"op":"schema","name":"v","schema":{"type":"integer"},"value":10.5}
{"op":"schema","name":"v","schema":{"type":"integer"},"value":1e400}
{"op":"schema","name":"v","schema":{"type":"string"},"value":1e21}
{"op":"schema","name":"v","schema":{"type":"string"},"value":-0.0}
{"op":"schema","name":"v","schema":{"type":"string"},"value":1.0e-7}
{"op":"schema","name":"v","schema":{"type":"string"},"value":123456789012345678901234567890}
{"op":"schema","name":"v","schema":{"type":"string"},"value":[1.50,2E2,-0]}
{"op":"schema","name":"v","schema":{"type":"string","x-kubernetes-validations":[{"rule":"self == 'x'","message":"<&>"}]},"value":"<&>"}
{"op":"schema","name":"v","schema":{"type":"object","x-kubernetes-validations":[{"rule":"self.a == 1"}],"properties":{"a":{"type":"number"}}},"value":{"a":12345678901234567890}}
{"op":"schema","mode":"crd","path":"spec","schema":{"type":"integer","maximum":5},"value":12345678901234567890}
{"op":"schema","mode":"crd","path":"spec","schema":{"type":"string","enum":["<"]},"value":"&"}
{"op":"schema","mode":"crd","path":"spec","schema":{"type":"number","maximum":5},"value":10}
{"op":"default","name":"v","schema":{"type":"object","properties":{"a":{"type":"string","default":"<&>"}}},"value":{}}
{"op":"default","name":"v","schema":{"type":"object","properties":{"a":{"type":"string","default":"<&>"}}},"value":{"b":"x>y"}}
{"op":"default","name":"v","schema":{"type":"object","properties":{"a":{"type":"integer","default":3}}},"value":{"n":12345678901234567890}}
{"op":"default","name":"v","schema":{"type":"object","properties":{"a":{"type":"integer","default":3}}},"value":{"n":9007199254740993}}
{"op":"default","name":"v","schema":{"type":"object","properties":{"a":{"type":"integer","default":3}}},"value":{"n":10.0}}
{"op":"default","name":"v","schema":{"type":"object","properties":{"a":{"type":"integer","default":3}}},"value":{"n":1e21}}
{"op":"default","name":"v","schema":{"type":"object","properties":{"a":{"type":"integer","default":3}}},"value":{"n":1e20}}
{"op":"default","name":"v","schema":{"type":"object","properties":{"a":{"type":"number","default":1.0},"n":{"type":"number","default":1e21},"m":{"type":"number","default":0.000001},"k":{"type":"number","default":1e-7}}},"value":{}}
{"op":"default","name":"v","schema":{"type":"string","default":"<\u2028>"}}
{"op":"default","name":"v","schema":{"type":"object","properties":{"a":{"type":"integer","default":3}}},"value":{"s":"\u2028\u00e9\ud83d\ude00"}}
# integer bounds
{"op":"schema","name":"v","schema":{"type":"number","minimum":5},"value":3}
{"op":"schema","name":"v","schema":{"type":"number","minimum":5,"exclusiveMinimum":true},"value":5}
{"op":"schema","name":"v","schema":{"type":"number","maximum":5,"exclusiveMaximum":true},"value":5}
{"op":"schema","name":"v","schema":{"type":"integer","minimum":-3},"value":-10}
{"op":"schema","name":"v","schema":{"type":"number","minimum":0},"value":-0.5}
{"op":"schema","name":"v","schema":{"type":"number","maximum":1000000},"value":12345678}
{"op":"schema","name":"v","schema":{"type":"number","maximum":100000000000000000000},"value":1e21}
{"op":"schema","name":"v","schema":{"type":"number","maximum":9007199254740993},"value":1e21}
{"op":"schema","name":"v","schema":{"type":"integer","maximum":5.0},"value":10}
{"op":"schema","name":"v","schema":{"type":"integer","maximum":5.5},"value":10}
{"op":"schema","name":"v","schema":{"type":"integer","maximum":-9223372036854775808},"value":10}
# maxProperties / minProperties / maxItems: Too many at the path, with the value
{"op":"schema","name":"v","schema":{"type":"object","maxProperties":1},"value":{"a":1,"b":2}}
{"op":"schema","name":"v","schema":{"type":"object","minProperties":3},"value":{"a":1,"b":2}}
{"op":"schema","name":"v","schema":{"type":"object","properties":{"o":{"type":"object","maxProperties":1,"additionalProperties":{"type":"integer"}}}},"value":{"o":{"a":1,"b":2}}}
{"op":"schema","name":"v","schema":{"type":"object","properties":{"o":{"type":"object","minProperties":3,"additionalProperties":{"type":"integer"}}}},"value":{"o":{"a":1,"b":2}}}
{"op":"schema","name":"v","schema":{"type":"array","items":{"type":"object","maxProperties":1,"additionalProperties":{"type":"string"}}},"value":[{"a":"<","b":"&"}]}
{"op":"schema","name":"v","schema":{"type":"object","maxProperties":1,"additionalProperties":{"type":"string"}},"value":{"<":"&","b":">"}}
{"op":"schema","name":"v","schema":{"type":"object","maxProperties":0},"value":{"a":1}}
{"op":"schema","name":"v","schema":{"type":"array","maxItems":1},"value":["<",">"]}
{"op":"schema","name":"v","schema":{"type":"array","minItems":3,"items":{"type":"integer"}},"value":[12345678901234567890]}
{"op":"schema","name":"v","schema":{"type":"object","properties":{"l":{"type":"array","maxItems":1,"items":{"type":"string"}}}},"value":{"l":["a","b"]}}
{"op":"schema","mode":"crd","path":"spec","schema":{"type":"object","maxProperties":1},"value":{"a":1,"b":2}}
{"op":"schema","mode":"crd","path":"spec","schema":{"type":"object","properties":{"o":{"type":"object","maxProperties":1}}},"value":{"o":{"a":1,"b":2}}}
{"op":"schema","mode":"crd","path":"spec","schema":{"type":"array","maxItems":1},"value":[1,2]}
'''

# Cluster values as Cluster API validates them: its defaulting writes each value again
# with Go's encoding/json, and the errors quote that text. Each line is a request of our
# own, op "cluster" (`default` then `schema` on the oracle's defaulted text); the answer
# stored is the oracle's answer to that second request.
CLUSTER = r'''
{"op":"cluster","name":"v","schema":{"type":"string","maxLength":2},"value":"<a&b>"}
{"op":"cluster","name":"v","schema":{"type":"string","enum":["x"]},"value":"<a&b>"}
{"op":"cluster","name":"v","schema":{"type":"object","properties":{"s":{"type":"string","enum":["x"]},"n":{"type":"integer","maximum":5}}},"value":{"s":"<>","n":12345678901234567890}}
{"op":"cluster","name":"v","schema":{"type":"number","maximum":5},"value":1e21}
{"op":"cluster","name":"v","schema":{"type":"number","maximum":5},"value":10.0}
{"op":"cluster","name":"v","schema":{"type":"integer","maximum":5},"value":10.0}
{"op":"cluster","name":"v","schema":{"type":"integer","maximum":5},"value":9007199254740993}
{"op":"cluster","name":"v","schema":{"type":"number","minimum":5},"value":1e-7}
{"op":"cluster","name":"v","schema":{"type":"array","maxItems":1},"value":["<",1.5e-7,100000000000000000000]}
{"op":"cluster","name":"v","schema":{"type":"object","maxProperties":1},"value":{"b":"\u2028","a":"&"}}
{"op":"cluster","name":"v","schema":{"type":"object","properties":{"o":{"type":"object","maxProperties":1,"additionalProperties":{"type":"string"}}}},"value":{"o":{"x":">","y":"<"}}}
{"op":"cluster","name":"v","schema":{"type":"object","properties":{"a":{"type":"string","default":"<&>"},"n":{"type":"integer","maximum":1}}},"value":{"n":2.0}}
{"op":"cluster","name":"v","schema":{"type":"string","x-kubernetes-validations":[{"rule":"self == 'x'"}]},"value":"a>b"}
{"op":"cluster","name":"v","schema":{"x-kubernetes-int-or-string":true,"maximum":3},"value":4.0}
{"op":"cluster","name":"v","schema":{"type":"object","properties":{"a":{"type":"string"}}},"value":{"a":"<","z":1e21}}
'''


def value_text(request):
    """The raw text of a request's `value` member (the last member of these lines)."""
    return request[request.index('"value":') + len('"value":'):-1]


def main():
    oracle = os.environ.get("ORACLE")
    if not oracle:
        sys.exit("set ORACLE to the oracle binary")
    requests = [l for l in CASES.splitlines() if l.strip() and not l.startswith("#")]
    for r in requests:
        json.loads(r)
    out = subprocess.run([oracle], input="\n".join(requests) + "\n", capture_output=True,
                         text=True, check=True).stdout.splitlines()
    if len(out) != len(requests):
        sys.exit(f"oracle answered {len(out)} lines for {len(requests)} requests")
    cluster = [l for l in CLUSTER.splitlines() if l.strip()]
    defaults, checks = [], []
    for r in cluster:
        d = json.loads(r)
        schema = json.dumps(d["schema"], separators=(",", ":"))
        defaults.append(f'{{"op":"default","name":"v","schema":{schema},"value":{value_text(r)}}}')
    defaulted = subprocess.run([oracle], input="\n".join(defaults) + "\n", capture_output=True,
                               text=True, check=True).stdout.splitlines()
    for r, ans in zip(cluster, defaulted):
        d = json.loads(r)
        a = json.loads(ans)
        if not a.get("ok") or "out" not in a:
            sys.exit(f"oracle did not default {r}: {ans}")
        schema = json.dumps(d["schema"], separators=(",", ":"))
        out_text = ans[ans.index('"out":') + len('"out":'):-1]
        checks.append(f'{{"op":"schema","name":"v","schema":{schema},"value":{out_text}}}')
    checked = subprocess.run([oracle], input="\n".join(checks) + "\n", capture_output=True,
                             text=True, check=True).stdout.splitlines()
    with open(os.path.join(HERE, "quirks.jsonl"), "w") as f:
        for n, (req, ans) in enumerate(zip(requests + cluster, out + checked), start=1):
            f.write(json.dumps({"line": n, "request": req, "expected": ans},
                               ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"wrote {len(requests) + len(cluster)} cases")


if __name__ == "__main__":
    main()
