//! Client channels that spread calls over every instance of a service.
//!
//! A gRPC channel to one address keeps one HTTP/2 connection to one server: behind a
//! Kubernetes Service or a compose alias, every applier and gateway would stay on the
//! replica it first reached, and added render replicas would sit idle. So a service is
//! named by one of three forms:
//!
//! * `http://host:port` (or `https://`, or plain `host:port`, which is what gRPC's own
//!   target syntax and our processes' "listening on" lines print): one endpoint,
//!   connected on first use;
//! * `dns:///host:port` (or `dns://host:port`): every address `host` resolves to,
//!   resolved again every few seconds (a headless Service lists its ready pods);
//! * `http://a:1,http://b:2`: a fixed list.
//!
//! For the last two, a background task keeps the balancer's set to the endpoints that
//! accept connections. A lazily connected endpoint that is down looks ready to the
//! balancer and fails every call sent to it, so the task probes each candidate and
//! takes it out until it answers again; if none answers, all stay in, so calls fail
//! fast with the connection error rather than wait for an endpoint.

use std::collections::BTreeSet;
use std::time::Duration;

use tokio::sync::mpsc::Sender;
use tonic::transport::channel::Change;
use tonic::transport::{Channel, Endpoint};

/// How a channel finds and checks its endpoints.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// How long connecting to one endpoint may take.
    pub connect_timeout: Duration,
    /// How often the candidates are resolved and probed again.
    pub refresh: Duration,
    /// How long one probe may take.
    pub probe_timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            connect_timeout: Duration::from_secs(3),
            refresh: Duration::from_secs(2),
            probe_timeout: Duration::from_secs(1),
        }
    }
}

/// Where a service's instances are, parsed from its address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Targets {
    /// One endpoint.
    Single(String),
    /// Every address a name resolves to, on a port, as `scheme://ip:port`.
    Dns {
        /// `http` or `https`.
        scheme: &'static str,
        /// The name to resolve.
        host: String,
        /// The port on every address.
        port: u16,
    },
    /// A fixed list of endpoints.
    List(Vec<String>),
}

impl Targets {
    /// Parses a service address (see the module documentation for the forms).
    pub fn parse(address: &str) -> Result<Targets, String> {
        let address = address.trim();
        if let Some(rest) = address.strip_prefix("dns://") {
            // `dns:///host:port` names no DNS server; `dns://host:port` is accepted too.
            let authority = rest.strip_prefix('/').unwrap_or(rest);
            let (host, port) = authority
                .rsplit_once(':')
                .ok_or_else(|| format!("{address:?}: a dns address needs host:port"))?;
            let port: u16 = port
                .parse()
                .map_err(|_| format!("{address:?}: port {port:?} is not a number"))?;
            let host = host.trim_start_matches('[').trim_end_matches(']');
            if host.is_empty() {
                return Err(format!("{address:?}: a dns address needs a host"));
            }
            return Ok(Targets::Dns {
                scheme: "http",
                host: host.to_string(),
                port,
            });
        }
        let parts: Vec<String> = address
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(endpoint_uri)
            .collect::<Result<_, _>>()?;
        match parts.as_slice() {
            [] => Err("service address is empty".to_string()),
            [one] => Ok(Targets::Single(one.to_string())),
            many => Ok(Targets::List(many.iter().map(|p| p.to_string()).collect())),
        }
    }
}

/// One endpoint's URI: `http://` or `https://` as given, a plain `host:port` as
/// `http://host:port`; anything else is refused with the forms that are taken.
pub fn endpoint_uri(address: &str) -> Result<String, String> {
    let uri = if address.contains("://") {
        address.to_string()
    } else {
        format!("http://{address}")
    };
    if !(uri.starts_with("http://") || uri.starts_with("https://")) {
        return Err(format!(
            "service address {address:?}: expected host:port, http://host:port, https://host:port or dns:///host:port"
        ));
    }
    Endpoint::from_shared(uri.clone()).map_err(|e| format!("service address {address:?}: {e}"))?;
    let plain = !address.contains("://");
    if plain
        && tonic::transport::Uri::try_from(uri.as_str())
            .ok()
            .and_then(|u| u.port_u16())
            .is_none()
    {
        return Err(format!(
            "service address {address:?}: needs a port (host:port)"
        ));
    }
    Ok(uri)
}

/// A channel to the service at `address`, balanced over its instances; nothing is
/// connected or resolved before the first call. Must be called inside a Tokio runtime
/// (the balancer and the discovery task run on it).
pub fn channel(address: &str, options: Options) -> Result<Channel, String> {
    match Targets::parse(address)? {
        Targets::Single(uri) => Ok(endpoint(&uri, &options)?.connect_lazy()),
        targets => {
            let (channel, changes) = Channel::balance_channel::<String>(64);
            tokio::spawn(discover(targets, changes, options));
            Ok(channel)
        }
    }
}

/// One endpoint of the service, configured by `options`.
fn endpoint(uri: &str, options: &Options) -> Result<Endpoint, String> {
    Endpoint::from_shared(uri.to_string())
        .map(|e| e.connect_timeout(options.connect_timeout))
        .map_err(|e| format!("service address {uri:?}: {e}"))
}

/// Keeps the balancer's endpoints to the candidates that accept connections, until the
/// channel is dropped.
async fn discover(targets: Targets, changes: Sender<Change<String, Endpoint>>, options: Options) {
    let mut candidates: Vec<String> = Vec::new();
    let mut live: BTreeSet<String> = BTreeSet::new();
    loop {
        // A failed lookup keeps the last answer: a DNS hiccup must not empty the set.
        if let Some(found) = resolve(&targets).await {
            candidates = found;
        }
        let wanted = healthy(&candidates, options.probe_timeout).await;
        for gone in live.difference(&wanted) {
            if changes.send(Change::Remove(gone.clone())).await.is_err() {
                return;
            }
        }
        for new in wanted.difference(&live) {
            let endpoint = match endpoint(new, &options) {
                Ok(endpoint) => endpoint,
                Err(error) => {
                    tracing::warn!(endpoint = %new, %error, "skipping an endpoint that is no URI");
                    continue;
                }
            };
            if changes
                .send(Change::Insert(new.clone(), endpoint))
                .await
                .is_err()
            {
                return;
            }
        }
        if wanted != live {
            tracing::info!(endpoints = ?wanted, "service endpoints changed");
        }
        live = wanted;
        tokio::select! {
            _ = tokio::time::sleep(options.refresh) => {}
            _ = changes.closed() => return,
        }
    }
}

/// The candidate endpoints, or `None` when the name does not resolve right now.
async fn resolve(targets: &Targets) -> Option<Vec<String>> {
    match targets {
        Targets::Single(uri) => Some(vec![uri.clone()]),
        Targets::List(uris) => Some(uris.clone()),
        Targets::Dns { scheme, host, port } => {
            match tokio::net::lookup_host((host.as_str(), *port)).await {
                Ok(addresses) => {
                    let found: BTreeSet<String> =
                        addresses.map(|a| format!("{scheme}://{a}")).collect();
                    Some(found.into_iter().collect())
                }
                Err(error) => {
                    tracing::warn!(%host, %error, "service name does not resolve; keeping the last endpoints");
                    None
                }
            }
        }
    }
}

/// The candidates that accept a TCP connection within `timeout`; all of them if none
/// does (calls then fail fast with the connection error instead of waiting).
async fn healthy(candidates: &[String], timeout: Duration) -> BTreeSet<String> {
    let probes = candidates.iter().cloned().map(|uri| async move {
        let reachable = match authority(&uri) {
            Some(authority) => matches!(
                tokio::time::timeout(timeout, tokio::net::TcpStream::connect(authority)).await,
                Ok(Ok(_))
            ),
            None => false,
        };
        (uri, reachable)
    });
    let results = futures::future::join_all(probes).await;
    let up: BTreeSet<String> = results
        .iter()
        .filter(|(_, reachable)| *reachable)
        .map(|(uri, _)| uri.clone())
        .collect();
    if up.is_empty() {
        candidates.iter().cloned().collect()
    } else {
        up
    }
}

/// `host:port` of `scheme://host:port[/…]`, with the scheme's port when none is given.
fn authority(uri: &str) -> Option<String> {
    let parsed: tonic::codegen::http::Uri = uri.parse().ok()?;
    let host = parsed.host()?;
    let port = parsed
        .port_u16()
        .unwrap_or(if parsed.scheme_str() == Some("https") {
            443
        } else {
            80
        });
    // A bracketed IPv6 host stays bracketed for `connect`.
    Some(format!("{host}:{port}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_to_their_targets() {
        let cases: &[(&str, Result<Targets, &str>)] = &[
            (
                "http://render:50051",
                Ok(Targets::Single("http://render:50051".into())),
            ),
            (
                " https://render.example:443 ",
                Ok(Targets::Single("https://render.example:443".into())),
            ),
            (
                "dns:///topograph-render-headless:50051",
                Ok(Targets::Dns {
                    scheme: "http",
                    host: "topograph-render-headless".into(),
                    port: 50051,
                }),
            ),
            (
                "dns://render:50051",
                Ok(Targets::Dns {
                    scheme: "http",
                    host: "render".into(),
                    port: 50051,
                }),
            ),
            (
                "http://127.0.0.1:1,http://127.0.0.1:2",
                Ok(Targets::List(vec![
                    "http://127.0.0.1:1".into(),
                    "http://127.0.0.1:2".into(),
                ])),
            ),
            ("dns:///render", Err("needs host:port")),
            ("dns:///render:port", Err("is not a number")),
            ("dns:///:50051", Err("needs a host")),
            ("", Err("empty")),
            (
                "render:50051",
                Ok(Targets::Single("http://render:50051".into())),
            ),
            (
                "127.0.0.1:50080",
                Ok(Targets::Single("http://127.0.0.1:50080".into())),
            ),
            (
                "http://a:1,render:2",
                Ok(Targets::List(vec![
                    "http://a:1".into(),
                    "http://render:2".into(),
                ])),
            ),
            ("unix:///tmp/s", Err("expected host:port, http://host:port")),
            ("render", Err("needs a port")),
        ];
        for (address, expected) in cases {
            let got = Targets::parse(address);
            match (expected, &got) {
                (Ok(want), Ok(got)) => assert_eq!(want, got, "{address:?}"),
                (Err(fragment), Err(message)) => assert!(
                    message.contains(fragment),
                    "{address:?}: {message:?} lacks {fragment:?}"
                ),
                _ => panic!("{address:?}: expected {expected:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn authorities_keep_ports_and_brackets() {
        assert_eq!(
            authority("http://127.0.0.1:50051").as_deref(),
            Some("127.0.0.1:50051")
        );
        assert_eq!(authority("http://[::1]:7").as_deref(), Some("[::1]:7"));
        assert_eq!(authority("https://render").as_deref(), Some("render:443"));
        assert_eq!(authority("not a uri"), None);
    }

    /// The set the balancer is given, as the discovery task changes it.
    async fn next_set(
        changes: &mut tokio::sync::mpsc::Receiver<Change<String, Endpoint>>,
        set: &mut BTreeSet<String>,
        want: &BTreeSet<String>,
    ) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while set != want {
            let change = tokio::time::timeout_at(deadline, changes.recv())
                .await
                .unwrap_or_else(|_| panic!("set stayed {set:?}, wanted {want:?}"))
                .unwrap_or_else(|| panic!("discovery ended with {set:?}"));
            match change {
                Change::Insert(key, _) => assert!(set.insert(key), "inserted twice"),
                Change::Remove(key) => assert!(set.remove(&key), "removed an absent key"),
            }
        }
    }

    #[tokio::test]
    async fn discovery_follows_the_endpoints_that_answer() {
        let up = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let down_later = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        // A port with nothing behind it: bind, note, close.
        let never = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let uri = |l: &tokio::net::TcpListener| format!("http://{}", l.local_addr().unwrap());
        let (up_uri, later_uri, never_uri) = (uri(&up), uri(&down_later), uri(&never));
        drop(never);

        let (sender, mut changes) = tokio::sync::mpsc::channel(16);
        let options = Options {
            refresh: Duration::from_millis(50),
            probe_timeout: Duration::from_millis(200),
            ..Options::default()
        };
        let targets = Targets::List(vec![up_uri.clone(), later_uri.clone(), never_uri.clone()]);
        let task = tokio::spawn(discover(targets, sender, options));

        let mut set = BTreeSet::new();
        let both: BTreeSet<String> = [up_uri.clone(), later_uri.clone()].into();
        next_set(&mut changes, &mut set, &both).await;

        // An endpoint that stops answering is taken out...
        let address = down_later.local_addr().unwrap();
        drop(down_later);
        next_set(&mut changes, &mut set, &[up_uri.clone()].into()).await;

        // ...and put back when it answers again.
        let _again = tokio::net::TcpListener::bind(address).await.unwrap();
        next_set(&mut changes, &mut set, &both).await;

        // With none answering, all stay in: calls fail fast instead of waiting.
        drop(up);
        drop(_again);
        let all: BTreeSet<String> = [up_uri, later_uri, never_uri].into();
        next_set(&mut changes, &mut set, &all).await;

        // Dropping the channel's end stops the task.
        drop(changes);
        tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .expect("discovery stops once the channel is gone")
            .unwrap();
    }

    #[tokio::test]
    async fn a_dns_name_gives_every_address_it_resolves_to() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let found = resolve(&Targets::Dns {
            scheme: "http",
            host: "localhost".into(),
            port,
        })
        .await
        .expect("localhost resolves");
        assert!(
            found.contains(&format!("http://127.0.0.1:{port}")),
            "{found:?}"
        );
        let unresolvable = resolve(&Targets::Dns {
            scheme: "http",
            host: "no-such-host.invalid".into(),
            port,
        })
        .await;
        assert_eq!(unresolvable, None);
    }
}
