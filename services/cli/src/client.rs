//! The gateway's command-line clients: `apply`, `get`, `list`, `delete`, `plan`,
//! `impact` and `watch`, each talking to any gateway (`--addr`, `--token`, or
//! `TOPOGRAPH_ADDR` / `TOPOGRAPH_TOKEN`).
//!
//! Contracts: `get cluster NAME -n NAMESPACE -o json` prints the Cluster with its
//! status; `plan -f FILE... -o json` prints `{"created": [...], "modified": [...],
//! "deleted": [...]}` with a `{"kind", "name", "namespace"}` entry per object, modified
//! entries adding `"patch"` (RFC 6902 operations). Exit codes: 0 success, 1 refused
//! (invalid input, not found, denied), 2 usage or connection errors.

use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use serde_json::{Value, json};
use tonic::metadata::MetadataValue;
use tonic::transport::Channel;
use tonic::{Code, Request, Status};
use topograph_api::object::ObjectExt;
use topograph_proto::gateway::v1 as pb;
use topograph_proto::gateway::v1::gateway_service_client::GatewayServiceClient;

use crate::up::LOCAL;

/// Where the gateway is and who is calling.
#[derive(Args, Debug, Clone)]
pub struct Connection {
    /// The gateway.
    #[arg(long, env = "TOPOGRAPH_ADDR", default_value = "http://127.0.0.1:50080")]
    addr: String,
    /// Bearer token.
    #[arg(
        long,
        env = "TOPOGRAPH_TOKEN",
        default_value = "",
        hide_env_values = true
    )]
    token: String,
    /// The management cluster.
    #[arg(short = 'm', long, env = "TOPOGRAPH_MANAGEMENT_CLUSTER", default_value = LOCAL)]
    management_cluster: String,
}

/// Output formats.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum Output {
    /// For people.
    Text,
    /// JSON.
    Json,
    /// YAML.
    Yaml,
}

/// `topograph apply`.
#[derive(Args, Debug)]
pub struct ApplyArgs {
    #[command(flatten)]
    connection: Connection,
    /// Files with ClusterClasses, templates and Clusters (`-` for standard input).
    #[arg(short = 'f', long = "filename", required = true)]
    files: Vec<String>,
    /// Namespace for objects that have none.
    #[arg(short = 'n', long, default_value = "default")]
    namespace: String,
    /// Validate and report, write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value = "text")]
    output: Output,
}

/// What `get`, `list` and `delete` act on.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum Kind {
    /// Clusters.
    #[value(alias = "clusters")]
    Cluster,
    /// ClusterClasses.
    #[value(alias = "clusterclasses", alias = "cc")]
    Clusterclass,
}

/// `topograph get`.
#[derive(Args, Debug)]
pub struct GetArgs {
    #[command(flatten)]
    connection: Connection,
    /// cluster or clusterclass.
    kind: Kind,
    /// Its name.
    name: String,
    /// Its namespace.
    #[arg(short = 'n', long, default_value = "default")]
    namespace: String,
    /// Output format (`json` and `yaml` print the object with its status).
    #[arg(short = 'o', long, value_enum, default_value = "text")]
    output: Output,
}

/// `topograph list`.
#[derive(Args, Debug)]
pub struct ListArgs {
    #[command(flatten)]
    connection: Connection,
    /// clusters or clusterclasses.
    kind: Kind,
    /// Only this namespace (default: every namespace you may see).
    #[arg(short = 'n', long, default_value = "")]
    namespace: String,
    /// Only Clusters of this class.
    #[arg(long, default_value = "")]
    class: String,
    /// Only Clusters with these labels (`a=b,c`).
    #[arg(short = 'l', long, default_value = "")]
    selector: String,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value = "text")]
    output: Output,
}

/// `topograph delete`.
#[derive(Args, Debug)]
pub struct DeleteArgs {
    #[command(flatten)]
    connection: Connection,
    /// cluster or clusterclass.
    kind: Kind,
    /// Its name.
    name: String,
    /// Its namespace.
    #[arg(short = 'n', long, default_value = "default")]
    namespace: String,
}

/// `topograph plan` and `topograph impact`.
#[derive(Args, Debug)]
pub struct PlanArgs {
    #[command(flatten)]
    connection: Connection,
    /// Files with the proposed objects: Clusters to plan (with any class or templates
    /// they need changed); for `impact`, one ClusterClass and its templates.
    #[arg(short = 'f', long = "filename", required = true)]
    files: Vec<String>,
    /// Namespace for objects that have none.
    #[arg(short = 'n', long, default_value = "default")]
    namespace: String,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value = "text")]
    output: Output,
}

/// `topograph watch`.
#[derive(Args, Debug)]
pub struct WatchArgs {
    #[command(flatten)]
    connection: Connection,
    /// One Cluster (default: every Cluster of the namespace).
    name: Option<String>,
    /// The namespace.
    #[arg(short = 'n', long, default_value = "default")]
    namespace: String,
    /// Start with the current conditions.
    #[arg(long)]
    include_existing: bool,
    /// Output format (`json`: one object per line).
    #[arg(short = 'o', long, value_enum, default_value = "text")]
    output: Output,
}

/// What `topograph rollout` does.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum RolloutAction {
    /// Where the rollout of the class is.
    Status,
    /// Move no more Clusters until resumed.
    Pause,
    /// Go on (also after a halt: the halted Clusters get a new deadline).
    Resume,
    /// Move the Clusters already moved back to the stable revision.
    Abort,
}

/// `topograph rollout`.
#[derive(Args, Debug)]
pub struct RolloutArgs {
    #[command(flatten)]
    connection: Connection,
    /// status, pause, resume or abort.
    action: RolloutAction,
    /// The ClusterClass (its RolloutPolicy has its name).
    class: String,
    /// Its namespace.
    #[arg(short = 'n', long, default_value = "default")]
    namespace: String,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value = "text")]
    output: Output,
}

/// The client subcommands.
#[derive(Subcommand, Debug)]
pub enum ClientCommand {
    /// Create or update ClusterClasses, templates and Clusters through the gateway.
    Apply(ApplyArgs),
    /// Show one Cluster or ClusterClass.
    Get(GetArgs),
    /// List Clusters or ClusterClasses.
    List(ListArgs),
    /// Delete a Cluster or ClusterClass.
    Delete(DeleteArgs),
    /// What reconciling would change with the proposed objects in place.
    Plan(PlanArgs),
    /// Which Clusters a proposed ClusterClass change would change, and which block it.
    Impact(PlanArgs),
    /// Stream reconcile outcomes and condition changes.
    Watch(WatchArgs),
    /// The rollout of a class change in waves: status, pause, resume, abort.
    Rollout(RolloutArgs),
}

/// An error with every cause under it (`transport error: tcp connect error: Connection
/// refused (os error 111)`): the first line alone does not say what went wrong.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// A gateway client carrying a bearer token.
pub struct Client {
    inner: GatewayServiceClient<Channel>,
    authorization: Option<MetadataValue<tonic::metadata::Ascii>>,
}

impl Client {
    /// Connects to `addr`.
    pub async fn connect(addr: &str, token: &str) -> Result<Client, String> {
        let uri = topograph_proto::balance::endpoint_uri(addr)?;
        let inner = GatewayServiceClient::connect(uri.clone())
            .await
            .map_err(|e| format!("connecting to {uri}: {}", with_causes(&e)))?
            .max_decoding_message_size(64 << 20);
        let authorization = if token.is_empty() {
            None
        } else {
            Some(
                format!("Bearer {token}")
                    .parse()
                    .map_err(|_| "the token is not a valid header value".to_string())?,
            )
        };
        Ok(Client {
            inner,
            authorization,
        })
    }

    fn request<T>(&self, message: T) -> Request<T> {
        let mut request = Request::new(message);
        if let Some(value) = &self.authorization {
            request
                .metadata_mut()
                .insert("authorization", value.clone());
        }
        request
    }

    /// Applies `objects` on `management_cluster`.
    pub async fn apply(
        &self,
        management_cluster: &str,
        objects: &[Value],
    ) -> Result<pb::ApplyResponse, Status> {
        self.apply_with(management_cluster, objects, false).await
    }

    async fn apply_with(
        &self,
        management_cluster: &str,
        objects: &[Value],
        dry_run: bool,
    ) -> Result<pb::ApplyResponse, Status> {
        let request = pb::ApplyRequest {
            management_cluster: management_cluster.to_string(),
            objects: objects.iter().map(json_bytes).collect(),
            dry_run,
        };
        let mut inner = self.inner.clone();
        Ok(inner.apply(self.request(request)).await?.into_inner())
    }
}

fn json_bytes(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_default()
}

fn parse_json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or(Value::Null)
}

/// Reads the objects of `files`, giving those without a namespace `namespace`.
fn read_objects(files: &[String], namespace: &str) -> Result<Vec<Value>, String> {
    let mut objects = Vec::new();
    for name in files {
        let text = crate::inputs::read_file(name).map_err(|e| format!("reading {name}: {e}"))?;
        let (docs, errors) = topograph_api::load::parse_documents(name, &text);
        if let Some(e) = errors.first() {
            return Err(e.to_string());
        }
        for doc in docs {
            let mut object = doc.value;
            if object.namespace().is_empty() && object.kind() != "Namespace" {
                // A document whose metadata is not an object is refused by the server
                // with its path; it must not panic here.
                topograph_api::object::set_at(
                    &mut object,
                    &["metadata", "namespace"],
                    json!(namespace),
                );
            }
            objects.push(object);
        }
    }
    Ok(objects)
}

/// Prints a refused call the way the rest of the command line reports problems: one
/// line, then the field violations one per line.
fn report(status: &Status) -> ExitCode {
    eprintln!("error: {}: {}", code_name(status.code()), status.message());
    use tonic_types::StatusExt;
    if let Some(bad) = status.get_details_bad_request() {
        for v in bad.field_violations {
            eprintln!("{}: {}", v.field, v.description);
        }
    }
    match status.code() {
        Code::Unavailable | Code::Unknown | Code::Internal | Code::DeadlineExceeded => {
            ExitCode::from(2)
        }
        _ => ExitCode::from(1),
    }
}

fn code_name(code: Code) -> String {
    format!("{code:?}")
}

fn print_conditions(conditions: &[pb::Condition]) {
    for c in conditions {
        println!(
            "  {:<24} {:<6} {:<24} {}",
            c.r#type,
            c.status,
            c.reason,
            c.message.replace('\n', " ")
        );
    }
}

/// Prints `value` as the structured output asked for; false for text output, which
/// each command prints its own way.
/// The Cluster's MachineDeployments and MachinePools, one table.
fn print_workers(workers: &[pb::Worker]) {
    if workers.is_empty() {
        return;
    }
    println!("Workers:");
    for line in worker_table(workers) {
        println!("  {line}");
    }
}

fn worker_table(workers: &[pb::Worker]) -> Vec<String> {
    let mut rows = vec![[
        "KIND".to_string(),
        "TOPOLOGY".to_string(),
        "NAME".to_string(),
        "CLASS".to_string(),
        "REPLICAS".to_string(),
        "READY".to_string(),
        "VERSION".to_string(),
    ]];
    for w in workers {
        let or_dash = |s: &str| {
            if s.is_empty() {
                "-".to_string()
            } else {
                s.to_string()
            }
        };
        rows.push([
            w.kind.clone(),
            or_dash(&w.topology_name),
            w.name.clone(),
            or_dash(&w.class),
            w.replicas.map_or("-".to_string(), |r| r.to_string()),
            w.ready_replicas.to_string(),
            or_dash(&w.version),
        ]);
    }
    let mut widths = [0; 7];
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.len());
        }
    }
    rows.iter()
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .zip(widths)
                .map(|(cell, width)| format!("{cell:<width$}"))
                .collect();
            cells.join("  ").trim_end().to_string()
        })
        .collect()
}

fn printed_structured(value: &Value, output: Output) -> bool {
    if output == Output::Text {
        return false;
    }
    print_value(value, output);
    true
}

fn print_value(value: &Value, output: Output) {
    match output {
        Output::Yaml => match serde_saphyr::to_string(value) {
            Ok(text) => print!("{text}"),
            Err(_) => println!("{value:#}"),
        },
        _ => println!(
            "{}",
            serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
        ),
    }
}

/// Runs a client subcommand.
pub fn run(command: &ClientCommand) -> ExitCode {
    crate::block_on(false, async {
        let connection = match command {
            ClientCommand::Apply(a) => &a.connection,
            ClientCommand::Get(a) => &a.connection,
            ClientCommand::List(a) => &a.connection,
            ClientCommand::Delete(a) => &a.connection,
            ClientCommand::Plan(a) | ClientCommand::Impact(a) => &a.connection,
            ClientCommand::Watch(a) => &a.connection,
            ClientCommand::Rollout(a) => &a.connection,
        };
        let client = match Client::connect(&connection.addr, &connection.token).await {
            Ok(client) => client,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        };
        let mc = connection.management_cluster.as_str();
        let result = match command {
            ClientCommand::Apply(a) => apply(&client, mc, a).await,
            ClientCommand::Get(a) => get(&client, mc, a).await,
            ClientCommand::List(a) => list(&client, mc, a).await,
            ClientCommand::Delete(a) => delete(&client, mc, a).await,
            ClientCommand::Plan(a) => plan(&client, mc, a).await,
            ClientCommand::Impact(a) => impact(&client, mc, a).await,
            ClientCommand::Watch(a) => watch(&client, mc, a).await,
            ClientCommand::Rollout(a) => rollout(&client, mc, a).await,
        };
        match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(Failure::Refused(status)) => report(&status),
            Err(Failure::Usage(message)) => {
                eprintln!("error: {message}");
                ExitCode::from(2)
            }
        }
    })
}

enum Failure {
    Refused(Status),
    Usage(String),
}

impl From<Status> for Failure {
    fn from(status: Status) -> Self {
        Failure::Refused(status)
    }
}

async fn apply(client: &Client, mc: &str, args: &ApplyArgs) -> Result<(), Failure> {
    let objects = read_objects(&args.files, &args.namespace).map_err(Failure::Usage)?;
    let response = client.apply_with(mc, &objects, args.dry_run).await?;
    for warning in &response.warnings {
        eprintln!("warning: {warning}");
    }
    if args.output == Output::Text {
        for o in &response.objects {
            let action = match pb::applied_object::Action::try_from(o.action) {
                Ok(pb::applied_object::Action::Created) => "created",
                Ok(pb::applied_object::Action::Updated) => "configured",
                Ok(pb::applied_object::Action::Unchanged) => "unchanged",
                _ => "applied",
            };
            let suffix = if args.dry_run { " (dry run)" } else { "" };
            println!("{} {}/{} {action}{suffix}", o.kind, o.namespace, o.name);
        }
    } else {
        let list: Vec<Value> = response
            .objects
            .iter()
            .map(|o| parse_json(&o.object))
            .collect();
        print_value(&json!(list), args.output);
    }
    Ok(())
}

async fn rollout(client: &Client, mc: &str, args: &RolloutArgs) -> Result<(), Failure> {
    let mut inner = client.inner.clone();
    let request = client.request(pb::RolloutRequest {
        management_cluster: mc.to_string(),
        namespace: args.namespace.clone(),
        name: args.class.clone(),
    });
    let answer = match args.action {
        RolloutAction::Status => inner.get_rollout(request).await?,
        RolloutAction::Pause => inner.pause_rollout(request).await?,
        RolloutAction::Resume => inner.resume_rollout(request).await?,
        RolloutAction::Abort => inner.abort_rollout(request).await?,
    }
    .into_inner();
    let policy = parse_json(&answer.policy);
    if printed_structured(&policy, args.output) {
        return Ok(());
    }
    for line in rollout_text(&args.namespace, &args.class, &answer) {
        println!("{line}");
    }
    print_conditions(&answer.conditions);
    Ok(())
}

/// A rollout for people: phase and revisions, the waves, a halt, the conditions.
fn rollout_text(namespace: &str, class: &str, r: &pb::Rollout) -> Vec<String> {
    let mut lines = vec![format!(
        "ClusterClass {namespace}/{class}  phase {}{}",
        if r.phase.is_empty() { "-" } else { &r.phase },
        if r.paused { " (paused)" } else { "" }
    )];
    lines.push(format!(
        "  stable revision  {}",
        or_dash(&r.stable_revision)
    ));
    lines.push(format!(
        "  target revision  {}",
        or_dash(&r.target_revision)
    ));
    if !r.waves.is_empty() {
        lines.push(format!(
            "  {:<16} {:>8} {:>6} {:>7}  {}",
            "WAVE", "CLUSTERS", "MOVED", "PASSED", "OPENED"
        ));
        for w in &r.waves {
            lines.push(format!(
                "  {:<16} {:>8} {:>6} {:>7}  {}",
                w.name, w.clusters, w.moved, w.passed, w.opened_at
            ));
        }
    }
    if !r.halted_cluster.is_empty() {
        lines.push(format!(
            "  halted by Cluster {}: {}",
            r.halted_cluster, r.halted_reason
        ));
    }
    lines
}

fn or_dash(text: &str) -> &str {
    if text.is_empty() { "-" } else { text }
}

async fn get(client: &Client, mc: &str, args: &GetArgs) -> Result<(), Failure> {
    let mut inner = client.inner.clone();
    match args.kind {
        Kind::Cluster => {
            let response = inner
                .get_cluster(client.request(pb::GetClusterRequest {
                    management_cluster: mc.to_string(),
                    namespace: args.namespace.clone(),
                    name: args.name.clone(),
                }))
                .await?
                .into_inner();
            let cluster = parse_json(&response.cluster);
            if printed_structured(&cluster, args.output) {
                return Ok(());
            }
            println!(
                "Cluster {}/{}  class {}  version {}",
                args.namespace,
                args.name,
                cluster["spec"]["topology"]["class"].as_str().unwrap_or("-"),
                cluster["spec"]["topology"]["version"]
                    .as_str()
                    .unwrap_or("-")
            );
            print_conditions(&response.conditions);
            print_workers(&response.workers);
            if !response.owned.is_empty() {
                println!("Owned objects:");
                for o in &response.owned {
                    println!("  {} {}", o.kind, o.name);
                }
            }
        }
        Kind::Clusterclass => {
            let response = inner
                .get_cluster_class(client.request(pb::GetClusterClassRequest {
                    management_cluster: mc.to_string(),
                    namespace: args.namespace.clone(),
                    name: args.name.clone(),
                }))
                .await?
                .into_inner();
            let class = parse_json(&response.cluster_class);
            if printed_structured(&class, args.output) {
                return Ok(());
            }
            println!("ClusterClass {}/{}", args.namespace, args.name);
            print_conditions(&response.conditions);
            println!(
                "Used by: {}",
                if response.clusters.is_empty() {
                    "-".to_string()
                } else {
                    response.clusters.join(", ")
                }
            );
        }
    }
    Ok(())
}

async fn list(client: &Client, mc: &str, args: &ListArgs) -> Result<(), Failure> {
    let mut inner = client.inner.clone();
    let mut rows: Vec<Value> = Vec::new();
    let mut page_token = String::new();
    loop {
        let next = match args.kind {
            Kind::Cluster => {
                let page = inner
                    .list_clusters(client.request(pb::ListClustersRequest {
                        management_cluster: mc.to_string(),
                        namespace: args.namespace.clone(),
                        class: args.class.clone(),
                        label_selector: args.selector.clone(),
                        page_size: 500,
                        page_token: page_token.clone(),
                    }))
                    .await?
                    .into_inner();
                for c in page.clusters {
                    let state = c.topology_reconciled.unwrap_or_default();
                    rows.push(json!({
                        "namespace": c.namespace, "name": c.name, "class": c.class,
                        "version": c.version, "reconciled": state.status,
                        "reason": state.reason, "generation": c.generation,
                        "observedGeneration": c.observed_generation,
                    }));
                }
                page.next_page_token
            }
            Kind::Clusterclass => {
                let page = inner
                    .list_cluster_classes(client.request(pb::ListClusterClassesRequest {
                        management_cluster: mc.to_string(),
                        namespace: args.namespace.clone(),
                        page_size: 500,
                        page_token: page_token.clone(),
                    }))
                    .await?
                    .into_inner();
                for c in page.cluster_classes {
                    let state = c.variables_ready.unwrap_or_default();
                    rows.push(json!({
                        "namespace": c.namespace, "name": c.name, "generation": c.generation,
                        "observedGeneration": c.observed_generation,
                        "variablesReady": state.status,
                    }));
                }
                page.next_page_token
            }
        };
        if next.is_empty() {
            break;
        }
        page_token = next;
    }
    if printed_structured(&json!(rows), args.output) {
        return Ok(());
    }
    match args.kind {
        Kind::Cluster => {
            println!(
                "{:<16} {:<24} {:<20} {:<10} {:<10} REASON",
                "NAMESPACE", "NAME", "CLASS", "VERSION", "RECONCILED"
            );
            for r in &rows {
                println!(
                    "{:<16} {:<24} {:<20} {:<10} {:<10} {}",
                    r["namespace"].as_str().unwrap_or_default(),
                    r["name"].as_str().unwrap_or_default(),
                    r["class"].as_str().unwrap_or_default(),
                    r["version"].as_str().unwrap_or_default(),
                    r["reconciled"].as_str().unwrap_or_default(),
                    r["reason"].as_str().unwrap_or_default()
                );
            }
        }
        Kind::Clusterclass => {
            println!(
                "{:<16} {:<24} {:<10} VARIABLES READY",
                "NAMESPACE", "NAME", "GENERATION"
            );
            for r in &rows {
                println!(
                    "{:<16} {:<24} {:<10} {}",
                    r["namespace"].as_str().unwrap_or_default(),
                    r["name"].as_str().unwrap_or_default(),
                    r["generation"],
                    r["variablesReady"].as_str().unwrap_or_default()
                );
            }
        }
    }
    Ok(())
}

async fn delete(client: &Client, mc: &str, args: &DeleteArgs) -> Result<(), Failure> {
    let mut inner = client.inner.clone();
    let deleted = match args.kind {
        Kind::Cluster => {
            inner
                .delete_cluster(client.request(pb::DeleteClusterRequest {
                    management_cluster: mc.to_string(),
                    namespace: args.namespace.clone(),
                    name: args.name.clone(),
                }))
                .await?
                .into_inner()
                .deleted
        }
        Kind::Clusterclass => {
            inner
                .delete_cluster_class(client.request(pb::DeleteClusterClassRequest {
                    management_cluster: mc.to_string(),
                    namespace: args.namespace.clone(),
                    name: args.name.clone(),
                }))
                .await?
                .into_inner()
                .deleted
        }
    };
    let what = if deleted { "deleted" } else { "not found" };
    println!("{:?} {}/{} {what}", args.kind, args.namespace, args.name);
    Ok(())
}

/// A plan entry as the `plan -o json` contract shapes it.
fn entry(o: &pb::PlannedObject, with_patch: bool) -> Value {
    let mut entry = json!({"kind": o.kind, "name": o.name, "namespace": o.namespace});
    if with_patch {
        entry["patch"] = parse_json(&o.patch);
    }
    entry
}

fn plan_json(plans: &[pb::PlanResponse]) -> Value {
    let all = |pick: fn(&pb::PlanResponse) -> &Vec<pb::PlannedObject>, patch: bool| -> Vec<Value> {
        plans
            .iter()
            .flat_map(|p| pick(p).iter().map(move |o| entry(o, patch)))
            .collect()
    };
    let mut json = json!({
        "created": all(|p| &p.created, false),
        "modified": all(|p| &p.modified, true),
        "deleted": all(|p| &p.deleted, false),
        "errors": plans.iter().flat_map(|p| p.errors.clone()).collect::<Vec<_>>(),
    });
    let revisions: Vec<&str> = plans
        .iter()
        .map(|p| p.revision.as_str())
        .filter(|r| !r.is_empty())
        .collect();
    if !revisions.is_empty() {
        json["revisions"] = json!(revisions);
    }
    json
}

fn print_plan_text(plan: &pb::PlanResponse) {
    for o in &plan.created {
        println!("+ create {} {}/{}", o.kind, o.namespace, o.name);
    }
    for o in &plan.modified {
        println!("~ modify {} {}/{}", o.kind, o.namespace, o.name);
        for line in o.diff.lines() {
            println!("    {line}");
        }
    }
    for o in &plan.deleted {
        println!("- delete {} {}/{}", o.kind, o.namespace, o.name);
    }
    for e in &plan.errors {
        println!("! {e}");
    }
}

async fn plan(client: &Client, mc: &str, args: &PlanArgs) -> Result<(), Failure> {
    let objects = read_objects(&args.files, &args.namespace).map_err(Failure::Usage)?;
    let clusters: Vec<&Value> = objects.iter().filter(|o| o.kind() == "Cluster").collect();
    if clusters.is_empty() {
        return Err(Failure::Usage(
            "plan needs at least one Cluster among the files (for a ClusterClass change alone, use impact)".into(),
        ));
    }
    let mut inner = client.inner.clone();
    let mut plans = Vec::new();
    for cluster in clusters {
        let response = inner
            .plan(client.request(pb::PlanRequest {
                management_cluster: mc.to_string(),
                namespace: cluster.namespace().to_string(),
                name: cluster.name().to_string(),
                proposed: objects.iter().map(json_bytes).collect(),
            }))
            .await?
            .into_inner();
        if args.output == Output::Text {
            println!("Cluster {}/{}:", cluster.namespace(), cluster.name());
            if !response.revision.is_empty() {
                println!(
                    "  (its rollout policy moves it to revision {})",
                    response.revision
                );
            }
            print_plan_text(&response);
        }
        plans.push(response);
    }
    if args.output != Output::Text {
        print_value(&plan_json(&plans), args.output);
    }
    Ok(())
}

async fn impact(client: &Client, mc: &str, args: &PlanArgs) -> Result<(), Failure> {
    let objects = read_objects(&args.files, &args.namespace).map_err(Failure::Usage)?;
    let mut inner = client.inner.clone();
    let mut stream = inner
        .impact(client.request(pb::ImpactRequest {
            management_cluster: mc.to_string(),
            proposed: objects.iter().map(json_bytes).collect(),
        }))
        .await?
        .into_inner();
    let (mut changing, mut blocking, mut total) = (0, 0, 0);
    while let Some(item) = stream.message().await? {
        total += 1;
        let plan = item.plan.unwrap_or_default();
        let changes =
            !(plan.created.is_empty() && plan.modified.is_empty() && plan.deleted.is_empty());
        changing += usize::from(changes);
        blocking += usize::from(!item.blocking.is_empty());
        match args.output {
            Output::Text => {
                let state = if !item.blocking.is_empty() {
                    "BLOCKS"
                } else if changes {
                    "changes"
                } else {
                    "unchanged"
                };
                let wave = match (item.wave.as_str(), plan.revision.as_str()) {
                    ("", "") => String::new(),
                    ("", revision) => format!(" (at revision {revision} already)"),
                    (wave, revision) => format!(" (wave {wave:?}, to revision {revision})"),
                };
                println!("{}/{}: {state}{wave}", item.namespace, item.name);
                for b in &item.blocking {
                    println!("  blocks: {b}");
                }
                if changes {
                    print_plan_text(&plan);
                }
            }
            _ => {
                let mut line = plan_json(std::slice::from_ref(&plan));
                line["namespace"] = json!(item.namespace);
                line["name"] = json!(item.name);
                line["blocking"] = json!(item.blocking);
                if !plan.revision.is_empty() {
                    line["revision"] = json!(plan.revision);
                    line["wave"] = json!(item.wave);
                }
                println!("{line}");
            }
        }
    }
    if args.output == Output::Text {
        println!(
            "{total} Clusters use the class: {changing} would change, {blocking} block the change"
        );
    }
    Ok(())
}

async fn watch(client: &Client, mc: &str, args: &WatchArgs) -> Result<(), Failure> {
    let mut inner = client.inner.clone();
    let mut stream = inner
        .watch(client.request(pb::WatchRequest {
            management_cluster: mc.to_string(),
            namespace: args.namespace.clone(),
            name: args.name.clone().unwrap_or_default(),
            include_existing: args.include_existing,
        }))
        .await?
        .into_inner();
    while let Some(event) = stream.message().await? {
        let (kind, detail) = match &event.event {
            Some(pb::watch_event::Event::Reconcile(r)) => (
                "event",
                json!({"reason": r.reason, "message": r.message, "type": r.r#type}),
            ),
            Some(pb::watch_event::Event::Condition(c)) => (
                "condition",
                json!({"type": c.r#type, "status": c.status, "reason": c.reason,
                       "message": c.message, "observedGeneration": c.observed_generation}),
            ),
            None => continue,
        };
        if args.output == Output::Text {
            let text = match &event.event {
                Some(pb::watch_event::Event::Reconcile(r)) => {
                    format!("{}: {}", r.reason, r.message)
                }
                Some(pb::watch_event::Event::Condition(c)) => format!(
                    "{}={} {} {}",
                    c.r#type,
                    c.status,
                    c.reason,
                    c.message.replace('\n', " ")
                ),
                None => String::new(),
            };
            println!(
                "{} {}/{} {kind} {text}",
                event.time, event.namespace, event.name
            );
        } else {
            println!(
                "{}",
                json!({"time": event.time, "namespace": event.namespace, "name": event.name, kind: detail})
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_print_as_one_table() {
        let worker = |kind: &str, topology: &str, replicas: Option<i32>| pb::Worker {
            kind: kind.to_string(),
            name: format!("dev-{topology}-abcde"),
            topology_name: topology.to_string(),
            class: "default-worker".to_string(),
            replicas,
            version: "v1.30.0".to_string(),
            ready_replicas: 1,
        };
        let table = worker_table(&[
            worker("MachineDeployment", "md-0", Some(2)),
            worker("MachinePool", "mp-0", None),
        ]);
        assert_eq!(
            table,
            [
                "KIND               TOPOLOGY  NAME            CLASS           REPLICAS  READY  VERSION",
                "MachineDeployment  md-0      dev-md-0-abcde  default-worker  2         1      v1.30.0",
                "MachinePool        mp-0      dev-mp-0-abcde  default-worker  -         1      v1.30.0",
            ]
        );
    }
}
