//! An object's JSON text as the owned-object cache keeps it: compressed against other
//! objects of its kind.
//!
//! A quick-start Cluster's own objects are 33 KB of text as the API server sends them.
//! Objects of one kind written from one template are alike but for a few values: the
//! same keys, labels, references and managed-fields entries, with other names, uids,
//! times and versions (an entry's field set names the owner's uid, so even entries
//! differ from Cluster to Cluster). So each store keeps a [`Dictionary`], the text of
//! objects of its kind, and every text it keeps is compressed (LZ4, block format)
//! against it: a text becomes a few hundred bytes of matches into the dictionary and the
//! values that differ.
//!
//! The dictionary starts as the first text kept. A text that still leaves much of
//! itself unmatched (an object of a new shape: another template, its first status) is
//! added to it, the oldest bytes going past [`LONGEST`], so the shapes a kind comes in
//! are all there to match. Each text holds the dictionary it was compressed with, so an
//! old one lives exactly as long as some text needs it; and a store changes its
//! dictionary at most [`CHANGES`] times, so texts that match nothing (every one unlike
//! the last) cannot pin a dictionary each. A read decompresses: a few microseconds per
//! object, against the parse that follows it.

use std::sync::{Arc, Mutex};

/// An object's text, compressed.
#[derive(Clone, Debug)]
pub(crate) struct KeptText {
    packed: Box<[u8]>,
    /// How long the text is.
    len: usize,
    /// What it was compressed against.
    dictionary: Arc<[u8]>,
}

/// The texts a store compresses what it keeps against.
#[derive(Debug, Default)]
pub(crate) struct Dictionary(Mutex<Texts>);

#[derive(Debug, Default)]
struct Texts {
    current: Option<Arc<[u8]>>,
    changes: usize,
}

/// How long a dictionary grows: compressing against it first reads all of it.
const LONGEST: usize = 16 * 1024;

/// How many times one store's dictionary changes at most.
const CHANGES: usize = 16;

/// Whether a text left so much of itself unmatched that it should be matched next time:
/// more than a fifth of it, and more than a small object's own names and uids.
fn poorly(packed: usize, len: usize) -> bool {
    packed * 5 > len && packed > 256
}

impl Dictionary {
    /// How long the current dictionary is.
    pub(crate) fn len(&self) -> usize {
        self.texts().current.as_ref().map_or(0, |d| d.len())
    }

    fn texts(&self) -> std::sync::MutexGuard<'_, Texts> {
        // Changes are whole, so a lock poisoned by a panic elsewhere is still good.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The dictionary with `text` added, and `true`; or, once it may not change again,
    /// the current one and `false`.
    fn grow(&self, text: &[u8]) -> (Arc<[u8]>, bool) {
        let mut texts = self.texts();
        if texts.changes >= CHANGES
            && let Some(current) = &texts.current
        {
            return (current.clone(), false);
        }
        let text = &text[text.len().saturating_sub(LONGEST)..];
        let old = texts.current.as_deref().unwrap_or_default();
        let old = &old[(old.len() + text.len())
            .saturating_sub(LONGEST)
            .min(old.len())..];
        let grown: Arc<[u8]> = [old, text].concat().into();
        texts.current = Some(grown.clone());
        texts.changes += 1;
        (grown, true)
    }
}

impl KeptText {
    /// `text` compressed against `dictionary`, which grows by it if it matched poorly.
    pub(crate) fn new(text: &str, dictionary: &Dictionary) -> KeptText {
        let bytes = text.as_bytes();
        let kept = |packed: Vec<u8>, dictionary: Arc<[u8]>| KeptText {
            packed: packed.into_boxed_slice(),
            len: bytes.len(),
            dictionary,
        };
        let current = dictionary.texts().current.clone();
        let tried = current.map(|current| {
            let packed = lz4_flex::block::compress_with_dict(bytes, &current);
            (packed, current)
        });
        match tried {
            Some((packed, current)) if !poorly(packed.len(), bytes.len()) => kept(packed, current),
            tried => match (dictionary.grow(bytes), tried) {
                // The budget is spent and no text was added meanwhile: as compressed.
                ((unchanged, false), Some((packed, current)))
                    if Arc::ptr_eq(&unchanged, &current) =>
                {
                    kept(packed, current)
                }
                ((dictionary, _), _) => kept(
                    lz4_flex::block::compress_with_dict(bytes, &dictionary),
                    dictionary,
                ),
            },
        }
    }

    /// The text as it was sent; `None` only if what was kept cannot be read back, which
    /// a text this type compressed cannot be.
    pub(crate) fn whole(&self) -> Option<String> {
        let bytes =
            lz4_flex::block::decompress_with_dict(&self.packed, self.len, &self.dictionary).ok()?;
        String::from_utf8(bytes).ok()
    }

    /// The bytes this text holds of its own (its dictionary not counted).
    pub(crate) fn size(&self) -> usize {
        self.packed.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A MachineDeployment as an API server sends it, for Cluster `i`; `reported` with
    /// the status and managed-fields entry its controller writes (a new shape: a third
    /// of the text more).
    fn machine_deployment(i: usize, reported: bool) -> String {
        let (status_entry, status) = if reported {
            (
                r#",{"apiVersion":"cluster.x-k8s.io/v1beta2","fieldsType":"FieldsV1","fieldsV1":{"f:status":{".":{},"f:observedGeneration":{},"f:phase":{},"f:readyReplicas":{},"f:replicas":{},"f:selector":{},"f:updatedReplicas":{}}},"manager":"machinedeployment-controller","operation":"Update","subresource":"status","time":"2026-11-27T10:01:02Z"}"#,
                format!(
                    r#","status":{{"conditions":[{{"lastTransitionTime":"2026-11-27T10:01:02Z","message":"Minimum availability requires 1 replicas, current 1 available","reason":"MinimumReplicasAvailable","status":"True","type":"Available"}},{{"lastTransitionTime":"2026-11-27T10:01:02Z","message":"All machines of the deployment are up to date and ready","reason":"AllMachinesReady","status":"True","type":"MachinesReady"}},{{"lastTransitionTime":"2026-11-27T10:01:02Z","message":"The deployment's machine set is scaled to its replicas","reason":"ScalingComplete","status":"False","type":"ScalingUp"}}],"observedGeneration":1,"phase":"Running","readyReplicas":1,"replicas":1,"selector":"cluster.x-k8s.io/cluster-name=fleet-{i}","updatedReplicas":1}}"#
                ),
            )
        } else {
            ("", String::new())
        };
        let owner = format!("{:08x}-1111-4222-8333-{:012x}", i * 7919, i * 104729);
        let uid = format!("{:08x}-aaaa-4bbb-8ccc-{:012x}", i * 6007, i * 15485863);
        let hash = format!("{:05x}", (i * 2654435761) % 0xfffff);
        format!(
            r#"{{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"MachineDeployment","metadata":{{"annotations":{{"machinedeployment.clusters.x-k8s.io/revision":"1"}},"creationTimestamp":"2026-11-27T10:{m:02}:{s:02}Z","generation":1,"labels":{{"cluster.x-k8s.io/cluster-name":"fleet-{i}","topology.cluster.x-k8s.io/deployment-name":"md-0","topology.cluster.x-k8s.io/owned":""}},"managedFields":[{{"apiVersion":"cluster.x-k8s.io/v1beta1","fieldsType":"FieldsV1","fieldsV1":{{"f:metadata":{{"f:labels":{{"f:cluster.x-k8s.io/cluster-name":{{}},"f:topology.cluster.x-k8s.io/deployment-name":{{}},"f:topology.cluster.x-k8s.io/owned":{{}}}},"f:ownerReferences":{{"k:{{\"uid\":\"{owner}\"}}":{{}}}}}},"f:spec":{{"f:clusterName":{{}},"f:replicas":{{}},"f:template":{{"f:spec":{{"f:bootstrap":{{"f:configRef":{{}}}},"f:infrastructureRef":{{}},"f:version":{{}}}}}}}}}},"manager":"capi-topology","operation":"Apply","time":"2026-11-27T10:{m:02}:{s:02}Z"}}{status_entry}],"name":"fleet-{i}-md-0-{hash}","namespace":"default","ownerReferences":[{{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Cluster","name":"fleet-{i}","uid":"{owner}"}}],"resourceVersion":"{rv}","uid":"{uid}"}},"spec":{{"clusterName":"fleet-{i}","minReadySeconds":0,"progressDeadlineSeconds":600,"replicas":1,"revisionHistoryLimit":1,"selector":{{"matchLabels":{{"cluster.x-k8s.io/cluster-name":"fleet-{i}","topology.cluster.x-k8s.io/deployment-name":"md-0","topology.cluster.x-k8s.io/owned":""}}}},"strategy":{{"rollingUpdate":{{"maxSurge":1,"maxUnavailable":0}},"type":"RollingUpdate"}},"template":{{"metadata":{{"labels":{{"cluster.x-k8s.io/cluster-name":"fleet-{i}","topology.cluster.x-k8s.io/deployment-name":"md-0","topology.cluster.x-k8s.io/owned":""}}}},"spec":{{"bootstrap":{{"configRef":{{"apiVersion":"bootstrap.cluster.x-k8s.io/v1beta1","kind":"KubeadmConfigTemplate","name":"fleet-{i}-md-0-{hash}-bootstrap","namespace":"default"}}}},"clusterName":"fleet-{i}","infrastructureRef":{{"apiVersion":"infrastructure.cluster.x-k8s.io/v1beta1","kind":"DockerMachineTemplate","name":"fleet-{i}-md-0-{hash}-infra","namespace":"default"}},"version":"v1.31.0"}}}}}}{status}}}"#,
            m = i / 60 % 60,
            s = i % 60,
            rv = 1000 + i * 37,
        )
    }

    #[test]
    fn objects_of_one_kind_are_kept_in_a_fraction_of_their_text() {
        let dictionary = Dictionary::default();
        let texts: Vec<String> = (0..200).map(|i| machine_deployment(i, i >= 100)).collect();
        let kept: Vec<KeptText> = texts
            .iter()
            .map(|text| KeptText::new(text, &dictionary))
            .collect();
        for (text, kept) in texts.iter().zip(&kept) {
            assert_eq!(kept.whole().as_deref(), Some(text.as_str()));
        }
        let sent: usize = texts.iter().map(String::len).sum();
        let own: usize = kept.iter().map(KeptText::size).sum();
        // Per object, what differs: names, uids, times, the version.
        assert!(own * 6 < sent, "{own} bytes kept of {sent} sent");

        // The first object with a status was a new shape: it was added, once.
        let dictionaries: Vec<*const u8> =
            kept.iter().map(|kept| kept.dictionary.as_ptr()).collect();
        let mut distinct = dictionaries.clone();
        distinct.dedup();
        assert_eq!(distinct.len(), 2, "{distinct:?}");
        assert_eq!(dictionaries[100], dictionaries[199]);
        assert_eq!(
            &*kept[100].dictionary,
            [texts[0].as_bytes(), texts[100].as_bytes()].concat()
        );
        // And an object without status still compresses against it.
        let again = KeptText::new(&texts[0], &dictionary);
        assert_eq!(again.dictionary.as_ptr(), dictionaries[199]);
    }

    #[test]
    fn texts_that_match_nothing_change_the_dictionary_a_bounded_number_of_times() {
        let dictionary = Dictionary::default();
        // Every text unlike every other: each would be added.
        let mut seed = 7u64;
        let kept: Vec<KeptText> = (0..100)
            .map(|_| {
                let text: String = (0..3000)
                    .map(|_| {
                        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                        char::from(b'a' + (seed >> 59) as u8)
                    })
                    .collect();
                let kept = KeptText::new(&text, &dictionary);
                assert_eq!(kept.whole().as_deref(), Some(text.as_str()));
                kept
            })
            .collect();
        let mut distinct: Vec<*const u8> = kept.iter().map(|k| k.dictionary.as_ptr()).collect();
        distinct.dedup();
        assert_eq!(distinct.len(), CHANGES);
        assert!(kept.iter().all(|k| k.dictionary.len() <= LONGEST));
    }

    #[test]
    fn short_texts_compress_against_what_there_is() {
        let dictionary = Dictionary::default();
        let first = KeptText::new(r#"{"metadata":{"name":"a"}}"#, &dictionary);
        let second = KeptText::new("[1,2]", &dictionary);
        assert!(Arc::ptr_eq(&first.dictionary, &second.dictionary));
        assert_eq!(second.whole().as_deref(), Some("[1,2]"));
        assert_eq!(KeptText::new("", &dictionary).whole().as_deref(), Some(""));
    }

    proptest! {
        /// Whatever texts come, in whatever order, each comes back byte for byte, with
        /// whichever dictionary it was kept.
        #[test]
        fn any_text_comes_back_byte_for_byte(
            texts in prop::collection::vec(
                prop_oneof![
                    "[a-z\"{}:,\u{e9}]{0,40}",
                    (0usize..50, any::<bool>()).prop_map(|(i, r)| machine_deployment(i, r)),
                ],
                1..12,
            ),
        ) {
            let dictionary = Dictionary::default();
            let kept: Vec<KeptText> =
                texts.iter().map(|text| KeptText::new(text, &dictionary)).collect();
            for (text, kept) in texts.iter().zip(&kept) {
                let whole = kept.whole();
                prop_assert_eq!(whole.as_deref(), Some(text.as_str()));
            }
        }
    }
}
