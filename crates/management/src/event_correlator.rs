//! Events correlated before they are written, as every Kubernetes controller's event
//! recorder does (client-go's `EventCorrelator`, which Cluster API's recorder uses with
//! its defaults):
//!
//! * **Aggregation.** Events about one object from one source, of one type and reason,
//!   whose messages differ: from the tenth distinct message within ten minutes of the
//!   last, the Event written is one aggregate, named afresh, with the message
//!   `(combined from similar events): <message>`; later ones count on it.
//! * **Counting.** An Event identical to one already written (the aggregate included)
//!   is not written again: the first is patched with `count` + 1, the new
//!   `lastTimestamp` and message.
//! * **Spam filter.** A source may write 25 Events about one object at once, then one
//!   more every five minutes (a token bucket per source and object); the rest are
//!   dropped.
//!
//! What each of the three remembers is kept for at most [`CACHE_ENTRIES`] keys, the
//! least recently used forgotten first. As in client-go, an Event's aggregation and
//! count are recorded before the spam filter decides, so a dropped Event still counts.
//!
//! Writes to one Event (its create, then its patches) are chained: each waits for the
//! one before, so a patch never reaches the server before the create it patches.

use std::collections::BTreeSet;
use std::hash::{DefaultHasher, Hasher};
use std::num::NonZeroUsize;
use std::sync::Mutex;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use lru::LruCache;
use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

/// How many keys each part of the correlator remembers (client-go's
/// `maxLruCacheEntries`).
pub const CACHE_ENTRIES: usize = 4096;
/// Distinct messages of similar Events before they are aggregated.
pub const AGGREGATE_AFTER: usize = 10;
/// How long after the last similar Event aggregation starts over.
pub const AGGREGATE_WINDOW: Duration = Duration::from_secs(600);
/// Events a source may write about an object at once.
pub const SPAM_BURST: f64 = 25.0;
/// Events a source may write about an object per second, once the burst is spent.
pub const SPAM_RATE: f64 = 1.0 / 300.0;
/// The message prefix of an aggregate Event.
pub const COMBINED: &str = "(combined from similar events): ";

/// What to write for a recorded Event.
#[derive(Debug)]
pub struct Correlated {
    /// The Event to create, or (with `patch`) the one to patch, by its name.
    pub event: Value,
    /// The merge patch (`count`, `lastTimestamp`, `message`) of an Event written
    /// before; `None` creates `event`.
    pub patch: Option<Value>,
    /// Resolves when the previous write to the same Event has ended.
    pub after: Option<oneshot::Receiver<()>>,
    /// Dropped when this write has ended, for the next write to the same Event.
    pub done: oneshot::Sender<()>,
}

/// The correlator of one recorder (one per management cluster and process, as each
/// Cluster API process has its own).
pub struct Correlator {
    state: Mutex<State>,
}

struct State {
    aggregates: LruCache<Key, Aggregate>,
    logs: LruCache<Key, Log>,
    spam: LruCache<Key, Bucket>,
}

/// Similar Events seen: their distinct messages and when the last came.
struct Aggregate {
    messages: BTreeSet<Key>,
    last: Timestamp,
}

/// An Event written: how often, since when, under which name, and its last write.
struct Log {
    count: u64,
    first_timestamp: Value,
    name: String,
    last_write: Option<oneshot::Receiver<()>>,
}

/// A token bucket, as `golang.org/x/time/rate` keeps one.
struct Bucket {
    tokens: f64,
    at: Timestamp,
}

impl Default for Correlator {
    fn default() -> Self {
        Correlator::with_capacity(CACHE_ENTRIES)
    }
}

impl Correlator {
    /// A correlator remembering at most `entries` keys in each of its parts.
    pub fn with_capacity(entries: usize) -> Self {
        let entries = NonZeroUsize::new(entries).unwrap_or(NonZeroUsize::MIN);
        Correlator {
            state: Mutex::new(State {
                aggregates: LruCache::new(entries),
                logs: LruCache::new(entries),
                spam: LruCache::new(entries),
            }),
        }
    }

    /// What to write for `event` (as the recorder built it: count 1, both timestamps
    /// and its name from `now`) recorded at `now`; `None` when the spam filter drops it.
    pub fn correlate(&self, event: Value, now: Timestamp) -> Option<Correlated> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (event, key) = state.aggregate(event, now);
        let correlated = state.observe(event, key);
        state.admits(&correlated.event, now).then_some(correlated)
    }
}

impl State {
    /// The Event to write and the key its writes are remembered by: the Event itself,
    /// or an aggregate of similar ones.
    fn aggregate(&mut self, event: Value, now: Timestamp) -> (Value, Key) {
        let similar = similar_key(&event);
        let message = key_of(&event, &[MESSAGE]);
        let record = self.aggregates.get_or_insert_mut(similar, || Aggregate {
            messages: BTreeSet::new(),
            last: now,
        });
        if record.messages.is_empty() || elapsed(record.last, now) > AGGREGATE_WINDOW {
            record.messages.clear();
        }
        record.messages.insert(message);
        record.last = now;
        if record.messages.len() < AGGREGATE_AFTER {
            let key = event_key(&event);
            return (event, key);
        }
        // Stay just under the limit, so every later distinct message aggregates too
        // (client-go drops an arbitrary one).
        record.messages.pop_first();
        (aggregate_of(&event, now), similar)
    }

    /// Counts `event` under `key`: the first is created, the next ones patch it.
    fn observe(&mut self, mut event: Value, key: Key) -> Correlated {
        let (done, next) = oneshot::channel();
        let log = self.logs.get_or_insert_mut(key, || Log {
            count: 0,
            first_timestamp: event.get("firstTimestamp").cloned().unwrap_or(Value::Null),
            name: text(&event, &["metadata", "name"]).to_string(),
            last_write: None,
        });
        let after = log.last_write.replace(next);
        let patch = if log.count > 0 {
            log.count += 1;
            if let Some(fields) = event.as_object_mut() {
                fields.insert("count".into(), json!(log.count));
                fields.insert("firstTimestamp".into(), log.first_timestamp.clone());
                if let Some(Value::Object(metadata)) = fields.get_mut("metadata") {
                    metadata.insert("name".into(), Value::String(log.name.clone()));
                }
            }
            Some(json!({
                "count": log.count,
                "lastTimestamp": event.get("lastTimestamp").cloned().unwrap_or(Value::Null),
                "message": event.get("message").cloned().unwrap_or(Value::Null),
            }))
        } else {
            log.count = event
                .get("count")
                .and_then(Value::as_u64)
                .unwrap_or(1)
                .max(1);
            None
        };
        Correlated {
            event,
            patch,
            after,
            done,
        }
    }

    /// Whether the spam filter lets `event` through at `now`.
    fn admits(&mut self, event: &Value, now: Timestamp) -> bool {
        let bucket = self.spam.get_or_insert_mut(spam_key(event), || Bucket {
            tokens: SPAM_BURST,
            at: now,
        });
        // As `rate.Limiter` does: tokens accrue from the last accepted Event, and a
        // refusal changes nothing.
        let refill = elapsed(bucket.at, now).as_secs_f64() * SPAM_RATE;
        let tokens = (bucket.tokens + refill).min(SPAM_BURST);
        if tokens < 1.0 {
            return false;
        }
        bucket.tokens = tokens - 1.0;
        bucket.at = bucket.at.max(now);
        true
    }
}

/// The aggregate Event standing for `event` and those similar to it: a new name, and
/// only the fields client-go copies into it.
fn aggregate_of(event: &Value, now: Timestamp) -> Value {
    let involved = event.get("involvedObject").cloned().unwrap_or(Value::Null);
    let stamp = timestamp(now);
    let mut aggregate = Map::new();
    for field in ["apiVersion", "kind"] {
        if let Some(value) = event.get(field) {
            aggregate.insert(field.into(), value.clone());
        }
    }
    aggregate.insert(
        "metadata".into(),
        json!({
            "name": format!("{}.{:x}", text(&involved, &["name"]), now.as_nanosecond()),
            "namespace": text(event, &["metadata", "namespace"]),
        }),
    );
    aggregate.insert("count".into(), json!(1));
    aggregate.insert("firstTimestamp".into(), stamp.clone());
    aggregate.insert("involvedObject".into(), involved);
    aggregate.insert("lastTimestamp".into(), stamp);
    aggregate.insert(
        "message".into(),
        Value::String(format!("{COMBINED}{}", text(event, &["message"]))),
    );
    for field in ["type", "reason", "source"] {
        if let Some(value) = event.get(field) {
            aggregate.insert(field.into(), value.clone());
        }
    }
    Value::Object(aggregate)
}

/// `now` as an Event's timestamps write it: as `metav1.Time` does, the fraction of a
/// second dropped ([`topograph_gocompat::time`]).
pub fn timestamp(now: Timestamp) -> Value {
    // Whole seconds towards the past, as Go's calendar counts them (jiff counts a time
    // before the epoch towards zero).
    let seconds = now.as_second() - i64::from(now.subsec_nanosecond() < 0);
    Value::String(topograph_gocompat::time::rfc3339(seconds))
}

fn elapsed(since: Timestamp, now: Timestamp) -> Duration {
    Duration::try_from(now.duration_since(since)).unwrap_or_default()
}

fn text<'a>(value: &'a Value, path: &[&str]) -> &'a str {
    path.iter()
        .try_fold(value, |value, field| value.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// What a key stands for: fields of an Event joined without a separator, as client-go
/// joins them. Kept as a 64-bit hash of that text rather than the text: the keys are
/// built for every Event, and with at most [`CACHE_ENTRIES`] of each kind remembered,
/// two distinct keys collide with a chance of about one in 10^12.
type Key = u64;

/// The key of the fields of `event` at `paths`.
fn key_of<'a>(event: &Value, paths: impl IntoIterator<Item = &'a &'a [&'a str]>) -> Key {
    let mut hasher = DefaultHasher::new();
    // Bytes written in turn hash as their concatenation: joined without a separator.
    for path in paths {
        hasher.write(text(event, path).as_bytes());
    }
    hasher.finish()
}

const SOURCE: &[&str] = &["source", "component"];
const HOST: &[&str] = &["source", "host"];
const KIND: &[&str] = &["involvedObject", "kind"];
const NAMESPACE: &[&str] = &["involvedObject", "namespace"];
const NAME: &[&str] = &["involvedObject", "name"];
const FIELD_PATH: &[&str] = &["involvedObject", "fieldPath"];
const UID: &[&str] = &["involvedObject", "uid"];
const API_VERSION: &[&str] = &["involvedObject", "apiVersion"];
const TYPE: &[&str] = &["type"];
const REASON: &[&str] = &["reason"];
const MESSAGE: &[&str] = &["message"];

/// A source and an object: the spam filter's key, and the start of the aggregator's.
const SOURCE_AND_OBJECT: &[&[&str]] = &[SOURCE, HOST, KIND, NAMESPACE, NAME, UID, API_VERSION];

/// One Event exactly: source, object, type, reason and message.
fn event_key(event: &Value) -> Key {
    key_of(
        event,
        &[
            SOURCE,
            HOST,
            KIND,
            NAMESPACE,
            NAME,
            FIELD_PATH,
            UID,
            API_VERSION,
            TYPE,
            REASON,
            MESSAGE,
        ],
    )
}

/// Similar Events: source, object, type and reason, whatever the message.
fn similar_key(event: &Value) -> Key {
    let rest: &[&[&str]] = &[
        TYPE,
        REASON,
        &["reportingComponent"],
        &["reportingInstance"],
    ];
    key_of(event, SOURCE_AND_OBJECT.iter().chain(rest))
}

/// Events from one source about one object.
fn spam_key(event: &Value) -> Key {
    key_of(event, SOURCE_AND_OBJECT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_are_dropped_not_rounded() {
        let cases = [
            (1_790_000_000_999_999_999i128, "2026-09-21T14:13:20Z"),
            (1_790_000_000_500_000_000, "2026-09-21T14:13:20Z"),
            (1_790_000_000_000_000_000, "2026-09-21T14:13:20Z"),
            (1_790_000_001_000_000_001, "2026-09-21T14:13:21Z"),
            (-500_000_000, "1969-12-31T23:59:59Z"),
        ];
        for (nanos, want) in cases {
            let at = Timestamp::from_nanosecond(nanos).unwrap_or(Timestamp::UNIX_EPOCH);
            assert_eq!(timestamp(at), want, "{nanos}");
        }
    }

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_790_000_000 + seconds).unwrap_or(Timestamp::UNIX_EPOCH)
    }

    /// An Event as the recorder builds it, about Cluster `default/dev`.
    fn recorded(reason: &str, message: &str, now: Timestamp) -> Value {
        json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": format!("dev.{:x}", now.as_nanosecond()), "namespace": "default"},
            "involvedObject": {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
                               "name": "dev", "namespace": "default", "uid": "u-1"},
            "reason": reason, "message": message, "type": "Normal",
            "source": {"component": "topology/cluster-controller"},
            "reportingComponent": "topology/cluster-controller",
            "firstTimestamp": timestamp(now), "lastTimestamp": timestamp(now), "count": 1,
        })
    }

    fn name(write: &Correlated) -> &str {
        text(&write.event, &["metadata", "name"])
    }

    #[test]
    fn the_tenth_distinct_message_is_aggregated_and_later_ones_count_on_it() {
        let correlator = Correlator::default();
        let mut writes = Vec::new();
        for i in 0..14 {
            let now = at(i);
            let event = recorded(
                "TopologyCreate",
                &format!("Created Thing \"default/t-{i}\""),
                now,
            );
            writes.push(correlator.correlate(event, now).expect("within the burst"));
        }
        for (i, write) in writes.iter().enumerate().take(9) {
            assert!(write.patch.is_none(), "event {i} is created");
            assert_eq!(
                name(write),
                format!("dev.{:x}", at(i as i64).as_nanosecond())
            );
            assert_eq!(
                write.event["message"],
                format!("Created Thing \"default/t-{i}\"")
            );
        }
        let aggregate = &writes[9];
        assert!(aggregate.patch.is_none(), "the aggregate is created");
        assert_eq!(
            aggregate.event["message"],
            "(combined from similar events): Created Thing \"default/t-9\""
        );
        assert_eq!(aggregate.event["count"], 1);
        assert_eq!(aggregate.event["reason"], "TopologyCreate");
        assert!(
            aggregate.event.get("reportingComponent").is_none(),
            "client-go copies no reporting fields"
        );
        let aggregate_name = name(aggregate).to_string();
        for (n, write) in writes.iter().enumerate().skip(10) {
            assert_eq!(
                name(write),
                aggregate_name,
                "event {n} counts on the aggregate"
            );
            let count = n as u64 - 8;
            assert_eq!(
                write.patch,
                Some(json!({
                    "count": count,
                    "lastTimestamp": timestamp(at(n as i64)),
                    "message": format!("(combined from similar events): Created Thing \"default/t-{n}\""),
                }))
            );
            assert_eq!(write.event["firstTimestamp"], timestamp(at(9)));
        }
    }

    #[test]
    fn an_identical_event_patches_the_first_one_with_its_count() {
        let correlator = Correlator::default();
        let first = correlator
            .correlate(recorded("TopologyUpdate", "Updated X", at(0)), at(0))
            .expect("first");
        let second = correlator
            .correlate(recorded("TopologyUpdate", "Updated X", at(7)), at(7))
            .expect("second");
        assert!(first.patch.is_none());
        assert_eq!(name(&second), name(&first));
        assert_eq!(second.event["count"], 2);
        assert_eq!(second.event["firstTimestamp"], timestamp(at(0)));
        assert_eq!(
            second.patch,
            Some(json!({"count": 2, "lastTimestamp": timestamp(at(7)), "message": "Updated X"}))
        );
        // Another reason is another Event.
        let other = correlator
            .correlate(recorded("TopologyDelete", "Updated X", at(8)), at(8))
            .expect("other");
        assert!(other.patch.is_none());
    }

    #[test]
    fn aggregation_starts_over_ten_minutes_after_the_last_similar_event() {
        let correlator = Correlator::default();
        for i in 0..9 {
            let event = recorded("TopologyCreate", &format!("m{i}"), at(i));
            assert!(
                correlator
                    .correlate(event, at(i))
                    .expect("kept")
                    .patch
                    .is_none()
            );
        }
        let late = at(8 + 601);
        let write = correlator
            .correlate(recorded("TopologyCreate", "m9", late), late)
            .expect("kept");
        assert_eq!(write.event["message"], "m9", "a fresh window: no aggregate");
        let just_in_time = at(8 + 601 + 600);
        let write = correlator
            .correlate(
                recorded("TopologyCreate", "m10", just_in_time),
                just_in_time,
            )
            .expect("kept");
        assert_eq!(write.event["message"], "m10", "two messages in this window");
    }

    #[test]
    fn an_object_gets_a_burst_of_25_then_one_event_every_five_minutes() {
        let correlator = Correlator::default();
        let kept = |reason: &str, seconds: i64| {
            let event = recorded(reason, &format!("{reason} at {seconds}"), at(seconds));
            correlator.correlate(event, at(seconds)).is_some()
        };
        // Distinct reasons, so nothing aggregates: only the filter decides.
        let reasons: Vec<String> = (0..27).map(|i| format!("R{i}")).collect();
        for reason in &reasons[..25] {
            assert!(kept(reason, 10));
        }
        assert!(!kept(&reasons[25], 10), "the 26th is dropped");
        assert!(
            !kept(&reasons[25], 10 + 299),
            "no token before five minutes"
        );
        assert!(kept(&reasons[25], 10 + 300), "one token after five minutes");
        assert!(!kept(&reasons[26], 10 + 300));
        // Another object has its own bucket.
        let mut other = recorded("R0", "elsewhere", at(310));
        other["involvedObject"]["name"] = json!("prod");
        other["involvedObject"]["uid"] = json!("u-2");
        assert!(correlator.correlate(other, at(310)).is_some());
    }

    #[test]
    fn a_dropped_event_still_counts() {
        let correlator = Correlator::default();
        for i in 0..25 {
            let event = recorded(&format!("R{i}"), "x", at(0));
            assert!(correlator.correlate(event, at(0)).is_some());
        }
        assert!(
            correlator
                .correlate(recorded("R0", "x", at(1)), at(1))
                .is_none()
        );
        let write = correlator
            .correlate(recorded("R0", "x", at(301)), at(301))
            .expect("a token again");
        assert_eq!(write.event["count"], 3, "the dropped one was counted");
    }

    #[tokio::test]
    async fn writes_to_one_event_wait_for_the_one_before() {
        let correlator = Correlator::default();
        let first = correlator
            .correlate(recorded("R", "same", at(0)), at(0))
            .expect("first");
        let second = correlator
            .correlate(recorded("R", "same", at(1)), at(1))
            .expect("second");
        assert!(first.after.is_none());
        let mut after = second.after.expect("chained to the first");
        assert!(after.try_recv().is_err(), "the first has not ended");
        drop(first.done);
        assert!(after.await.is_err(), "resolves once the first ended");
        let unrelated = correlator
            .correlate(recorded("R", "another", at(2)), at(2))
            .expect("unrelated");
        assert!(unrelated.after.is_none());
    }

    #[test]
    fn each_memory_forgets_the_least_recently_used_key_first() {
        let correlator = Correlator::with_capacity(2);
        for message in ["a", "b", "a", "c"] {
            correlator.correlate(recorded("R", message, at(0)), at(0));
        }
        // "b" was forgotten ("a" was used after it), so it is created anew.
        let b = correlator
            .correlate(recorded("R", "b", at(1)), at(1))
            .expect("kept");
        assert!(b.patch.is_none());
        let c = correlator
            .correlate(recorded("R", "c", at(1)), at(1))
            .expect("kept");
        assert_eq!(c.event["count"], 2, "\"c\" is remembered");
    }

    proptest::proptest! {
        /// Whatever the sequence, a patch names an Event recorded before it (created,
        /// or dropped by the spam filter, in which case the patch finds nothing and the
        /// Event is created then), with a count above the last one written, and the
        /// combined prefix is never doubled.
        #[test]
        fn every_patch_counts_on_an_event_recorded_before(
            steps in proptest::collection::vec((0..3usize, 0..14usize, 0..400i64), 1..80)
        ) {
            let correlator = Correlator::with_capacity(16);
            let mut recorded_names = std::collections::HashSet::new();
            let mut counts = std::collections::HashMap::<String, u64>::new();
            let mut now = 0;
            for (i, (reason, message, pause)) in steps.into_iter().enumerate() {
                now += pause;
                // Names are unique, as the recorder's nanoseconds make them.
                let t = at(now)
                    .checked_add(k8s_openapi::jiff::SignedDuration::from_nanos(i as i64))
                    .unwrap_or(at(now));
                let event = recorded(&format!("R{reason}"), &format!("m{message}"), t);
                recorded_names.insert(text(&event, &["metadata", "name"]).to_string());
                let Some(write) = correlator.correlate(event, t) else { continue };
                let name = name(&write).to_string();
                let count = write.event["count"].as_u64().unwrap_or(0);
                if let Some(patch) = &write.patch {
                    let aggregate = write.event["message"].as_str().is_some_and(|m| m.starts_with(COMBINED));
                    proptest::prop_assert!(aggregate || recorded_names.contains(&name), "{} never recorded", name);
                    proptest::prop_assert!(count > counts.get(&name).copied().unwrap_or(1));
                    proptest::prop_assert_eq!(&patch["count"], &write.event["count"]);
                } else {
                    proptest::prop_assert_eq!(count, 1);
                }
                counts.insert(name, count);
                let message = write.event["message"].as_str().unwrap_or("");
                let twice = COMBINED.repeat(2);
                proptest::prop_assert!(!message.starts_with(&twice), "{}", message);
            }
        }
    }
}
