//! Data converted once and used for many executions gives the same output as fresh
//! data every time, including for templates that change maps in place.

use serde_json::json;
use topograph_gotemplate::{Data, Options, Template};

#[test]
fn reused_data_behaves_like_fresh_data() {
    let json = json!({"m": {"a": 1}, "n": 1000000, "list": ["x", "y"]});
    let data = Data::new(&json);
    let templates = [
        "{{ .n }} {{ .m.a }} {{ index .list 1 }}",
        "{{ $_ := set .m \"b\" 2 }}{{ .m }}",
        "{{ $_ := unset .m \"a\" }}{{ .m }}",
        "{{ $_ := merge .m (dict \"c\" 3) }}{{ .m }}",
        "{{ .m }}",
    ];
    for text in templates {
        let template = match Template::parse("tpl", text, &Options::patch()) {
            Ok(t) => t,
            Err(e) => panic!("{text}: {e}"),
        };
        for _ in 0..2 {
            assert_eq!(
                template.execute_data(&data),
                template.execute(&json),
                "{text}"
            );
        }
    }
}

#[test]
fn shared_data_behaves_like_fresh_data() {
    let base = json!({"builtin": {"cluster": {"name": "c1"}}, "tag": "v1", "list": [1, 2]});
    let item = json!({"builtin": {"cluster": {"name": "c1"}, "machineDeployment": {"class": "w"}}, "tag": "v2", "list": [1, 2]});
    let base_data = Data::new(&base);
    let shared = Data::sharing(&item, &base_data);
    for text in [
        "{{ .builtin.cluster.name }}/{{ .builtin.machineDeployment.class }}/{{ .tag }}/{{ .list }}",
        "{{ $_ := set .builtin \"x\" 1 }}{{ .builtin }}",
        "{{ .builtin }}",
    ] {
        let template = match Template::parse("tpl", text, &Options::patch()) {
            Ok(t) => t,
            Err(e) => panic!("{text}: {e}"),
        };
        assert_eq!(
            template.execute_data(&shared),
            template.execute(&item),
            "{text}"
        );
        assert_eq!(
            template.execute_data(&base_data),
            template.execute(&base),
            "{text}"
        );
    }
}

#[test]
fn templates_reading_some_fields_behave_like_fresh_data() {
    let base =
        json!({"builtin": {"cluster": {"name": "c1"}}, "tag": "v1", "m": {"a": 1}, "list": [1, 2]});
    let item = json!({"builtin": {"cluster": {"name": "c1"}, "machineDeployment": {"class": "w"}}, "tag": "v2", "m": {"a": 1}, "list": [1, 2], "extra": true});
    let base_data = Data::new(&base);
    let shared = Data::sharing(&item, &base_data);
    let fresh = Data::new(&item);
    for text in [
        "{{ .tag }}",
        "{{ .missing }}|{{ .missing.x }}",
        "{{ .builtin.machineDeployment.class }}",
        "{{ range .list }}{{ . }}{{ $.tag }}{{ end }}",
        "{{ with .m }}{{ .a }}{{ .tag }}{{ else }}{{ .tag }}{{ end }}",
        "{{ with .nothing }}{{ . }}{{ else }}{{ .tag }}{{ end }}",
        "{{ (.m).a }} {{ $x := .m }}{{ $x.a }}",
        "{{ if .m }}{{ .m.a }}{{ end }}",
        "{{ define \"x\" }}{{ .a }}{{ end }}{{ template \"x\" .m }}",
        "{{ define \"x\" }}{{ .tag }}{{ end }}{{ template \"x\" . }}",
        "{{ . }}",
        "{{ $ }}",
        "{{ len . }}",
        "{{ toJson . }}",
        "{{ keys . | sortAlpha }}",
        "{{ hasKey . \"extra\" }} {{ index . \"tag\" }}",
        "{{ range $k, $v := . }}{{ $k }}{{ end }}",
        "{{ range .list }}{{ $ }}{{ end }}",
    ] {
        let template = match Template::parse("tpl", text, &Options::patch()) {
            Ok(t) => t,
            Err(e) => panic!("{text}: {e}"),
        };
        for _ in 0..2 {
            assert_eq!(
                template.execute_data(&shared),
                template.execute(&item),
                "{text}"
            );
            assert_eq!(
                template.execute_data(&fresh),
                template.execute(&item),
                "{text}"
            );
            assert_eq!(
                template.execute_data(&base_data),
                template.execute(&base),
                "{text}"
            );
        }
    }
}
