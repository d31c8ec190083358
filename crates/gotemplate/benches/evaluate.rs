//! Parse and execute cost for three template sizes: a one-field image tag, a
//! 20-line YAML block with `if`/`range`, and a ~200-line template with
//! `define`/`template`, a range over 100 items and Sprig calls.
//!
//! `cached/*` is what the patch engine pays per patch value: a look-up of the parsed
//! template by its text in a per-render map, then an execution over data converted
//! once (see `TemplateCache` in `crates/engine/src/patches/template_value.rs`).

use std::collections::HashMap;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use std::hint::black_box;
use topograph_gotemplate::{Data, Options, Template};

const SMALL: &str = r#"kindest/node:{{ .builtin.machineDeployment.version | replace "+" "_" }}"#;

const MEDIUM: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .builtin.cluster.name }}-settings
  namespace: {{ .builtin.cluster.namespace }}
  labels:
{{- range $k, $v := .labels }}
    {{ $k }}: {{ $v | quote }}
{{- end }}
data:
  region: {{ .region | default "us-east-1" }}
  replicas: "{{ .builtin.controlPlane.replicas }}"
{{- if semverCompare ">=1.29.0" .builtin.controlPlane.version }}
  cgroupDriver: systemd
{{- else }}
  cgroupDriver: cgroupfs
{{- end }}
  servers: |
{{- range .servers }}
    - {{ .name }}:{{ .port }}
{{- end }}
"#;

fn large_template() -> String {
    let mut t = String::new();
    t.push_str(
        r#"{{- define "labels" -}}
app.kubernetes.io/name: {{ .name | lower | trunc 63 }}
app.kubernetes.io/instance: {{ .instance | quote }}
app.kubernetes.io/version: {{ .version | trimPrefix "v" }}
{{- end -}}
{{- define "container" -}}
- name: {{ .name }}
  image: "{{ .image }}:{{ .tag | default "latest" }}"
  args: {{ toJson .args }}
  resources:
    requests:
      cpu: {{ .cpu | default "100m" }}
      memory: {{ .memory | default "128Mi" }}
{{- end -}}
"#,
    );
    for i in 0..20 {
        t.push_str(&format!(
            "# section {i}\nsection{i}:\n  enabled: {{{{ .enabled | ternary \"yes\" \"no\" }}}}\n  name: {{{{ printf \"%s-%d\" .builtin.cluster.name {i} }}}}\n  hash: {{{{ sha256sum .builtin.cluster.name | trunc 8 }}}}\n"
        ));
    }
    t.push_str(
        r#"metadata:
  labels:
{{- $l := dict "name" .builtin.cluster.name "instance" .builtin.cluster.namespace "version" .builtin.controlPlane.version }}
    {{ template "labels" $l }}
items:
"#,
    );
    t.push_str(
        r#"{{- range $i, $item := .items }}
  - index: {{ $i }}
    name: {{ $item.name | upper }}
    weight: {{ mulf $item.weight 1.5 }}
    tags: {{ $item.tags | join "," | quote }}
{{- if gt $item.weight 50.0 }}
    heavy: true
{{- end }}
{{- with $item.extra }}
    extra: {{ toJson . }}
{{- end }}
{{- end }}
containers:
{{- range .containers }}
{{ template "container" . }}
{{- end }}
summary: {{ len .items }} items, {{ .items | first | toJson | b64enc | trunc 16 }}
"#,
    );
    t
}

fn data() -> Value {
    let items: Vec<Value> = (0..100)
        .map(|i| {
            json!({"name": format!("item-{i}"), "weight": i as f64 * 1.25,
                   "tags": ["a", "b", format!("t{i}")],
                   "extra": if i % 3 == 0 { json!({"k": i}) } else { Value::Null }})
        })
        .collect();
    json!({
        "builtin": {
            "cluster": {"name": "my-cluster", "namespace": "default"},
            "controlPlane": {"version": "v1.29.3", "replicas": 3},
            "machineDeployment": {"version": "v1.28.5+k3s1"},
        },
        "labels": {"app": "web", "tier": "frontend", "zone": "a"},
        "region": "",
        "enabled": true,
        "servers": [{"name": "a", "port": 80}, {"name": "b", "port": 443}],
        "items": items,
        "containers": [
            {"name": "api", "image": "registry/api", "tag": "v1", "args": ["--x", "--y"]},
            {"name": "worker", "image": "registry/worker", "args": []},
        ],
    })
}

fn bench(c: &mut Criterion) {
    let opts = Options::patch();
    let large = large_template();
    let d = data();
    for (name, text) in [
        ("small", SMALL),
        ("medium", MEDIUM),
        ("large", large.as_str()),
    ] {
        let t = match Template::parse("tpl", text, &opts) {
            Ok(t) => t,
            Err(e) => panic!("{name}: {e}"),
        };
        if let Err(e) = t.execute(&d) {
            panic!("{name}: {e}");
        }
        c.bench_function(&format!("parse/{name}"), |b| {
            b.iter(|| Template::parse("tpl", black_box(text), &opts))
        });
        c.bench_function(&format!("execute/{name}"), |b| {
            b.iter(|| t.execute(black_box(&d)))
        });
        // Data converted once, as the patch engine does for each template it feeds.
        let converted = Data::new(&d);
        c.bench_function(&format!("execute-converted/{name}"), |b| {
            b.iter(|| t.execute_data(black_box(&converted)))
        });
        // The engine's per-render cache, keyed by text with the parse error kept as
        // text; the look-up mirrors `TemplateCache::get` (an owned key per look-up).
        let mut cache: HashMap<String, Result<Template, String>> = HashMap::new();
        cache.insert(text.to_string(), Ok(t.clone()));
        c.bench_function(&format!("cached/{name}"), |b| {
            b.iter(|| {
                let template = cache
                    .entry(black_box(text).to_string())
                    .or_insert_with(|| {
                        Template::parse("tpl", text, &opts).map_err(|e| e.to_string())
                    })
                    .as_ref()
                    .map_err(Clone::clone)?;
                template
                    .execute_data(black_box(&converted))
                    .map_err(|e| e.to_string())
            })
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
