//! Work shared by the restarts of one fit: values of deterministic steps (a grown seed
//! feature, a refinement round, a whole run from its seed), keyed by the exact bytes of what
//! they are computed from. A restart that meets a key another restart met takes the value
//! instead of computing it again; since the value is a function of the key, the result is
//! bit for bit what computing it would give, whichever restart got there first and on any
//! number of threads.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;

/// The memos' maps: keys are the bytes of states the fit itself made (no outside input
/// chooses them), so a fast multiplicative hash of eight bytes at a time serves instead of
/// the standard map's SipHash, which hashing keys of a few hundred bytes spent 2–3 % of a
/// default BP-means fit on (docs/speed.md §2).
pub(crate) type KeyMap<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;

/// A word-at-a-time multiplicative hash (the rotate, xor and multiply of the Fx hash of
/// the Rust compiler), with the length of each write mixed in.
#[derive(Default, Clone, Copy, Debug)]
pub(crate) struct KeyHasher(u64);

impl KeyHasher {
    const K: u64 = 0x517c_c1b7_2722_0a95;

    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::K);
    }
}

impl Hasher for KeyHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.add(u64::from_le_bytes(w.try_into().expect("eight bytes")));
        }
        let rest = words.remainder();
        let mut last = [0u8; 8];
        last[..rest.len()].copy_from_slice(rest);
        self.add(u64::from_le_bytes(last) ^ ((bytes.len() as u64) << 56));
    }

    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.add(v);
    }

    #[inline]
    fn write_usize(&mut self, v: usize) {
        self.add(v as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A map from exact keys to values, shared by the restarts of one fit (behind a lock), that
/// stops taking entries once they hold `budget` bytes (later values are computed every time:
/// the same results, more work).
#[derive(Debug)]
pub(crate) struct SharedMemo<V> {
    inner: Mutex<Inner<V>>,
    budget: usize,
}

#[derive(Debug)]
struct Inner<V> {
    map: KeyMap<Vec<u8>, V>,
    bytes: usize,
    hits: usize,
}

impl<V: Clone> SharedMemo<V> {
    /// An empty memo that holds at most `budget` bytes (as its callers count them).
    pub fn new(budget: usize) -> Self {
        Self {
            inner: Mutex::new(Inner {
                map: KeyMap::default(),
                bytes: 0,
                hits: 0,
            }),
            budget,
        }
    }

    /// The value remembered for `key`.
    pub fn get(&self, key: &[u8]) -> Option<V> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let found = inner.map.get(key)?.clone();
        inner.hits += 1;
        Some(found)
    }

    /// Remembers `value` for `key`, counted as `bytes` beside the key, unless the budget is
    /// spent or the key is there already.
    pub fn insert(&self, key: Vec<u8>, value: V, bytes: usize) {
        let bytes = bytes + key.len();
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if inner.bytes + bytes > self.budget {
            return;
        }
        // One lookup, not a test then an insert: each hashes the key.
        if let Entry::Vacant(slot) = inner.map.entry(key) {
            slot.insert(value);
            inner.bytes += bytes;
        }
    }

    /// The value for `key`: remembered, or made by `make` and remembered (counted as
    /// `bytes(&value)` beside the key).
    pub fn get_or_make(
        &self,
        key: Vec<u8>,
        make: impl FnOnce() -> V,
        bytes: impl FnOnce(&V) -> usize,
    ) -> V {
        if let Some(v) = self.get(&key) {
            return v;
        }
        let v = make();
        self.insert(key, v.clone(), bytes(&v));
        v
    }

    /// Values taken from the memo so far.
    #[cfg(test)]
    pub fn hits(&self) -> usize {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_kept_by_key_within_the_budget() {
        let memo = SharedMemo::new(40);
        assert_eq!(memo.get(b"a"), None);
        let made = memo.get_or_make(b"a".to_vec(), || 7, |_| 10);
        assert_eq!(made, 7);
        // Remembered: `make` is not called again.
        assert_eq!(
            memo.get_or_make(b"a".to_vec(), || panic!("made twice"), |_| 10),
            7
        );
        assert_eq!(memo.hits(), 1);
        // The first value stays.
        memo.insert(b"a".to_vec(), 8, 10);
        assert_eq!(memo.get(b"a"), Some(7));
        // 11 + 11 bytes are in; another 30 would pass the budget of 40.
        memo.insert(b"b".to_vec(), 9, 10);
        memo.insert(b"c".to_vec(), 1, 29);
        assert_eq!(memo.get(b"b"), Some(9));
        assert_eq!(memo.get(b"c"), None);
    }

    /// Keys that differ in one byte anywhere, or only in length (trailing zeros), hash
    /// apart: every word and the length reach the hash.
    #[test]
    fn keys_differing_anywhere_hash_apart() {
        use std::hash::{BuildHasher, BuildHasherDefault};
        let build = BuildHasherDefault::<KeyHasher>::default();
        let base: Vec<u8> = (0..37u8).collect();
        let mut seen = std::collections::HashSet::new();
        assert!(seen.insert(build.hash_one(&base)));
        for i in 0..base.len() {
            let mut key = base.clone();
            key[i] ^= 1;
            assert!(seen.insert(build.hash_one(&key)), "byte {i}");
        }
        for len in 0..12 {
            assert!(seen.insert(build.hash_one(vec![0u8; len])), "length {len}");
        }
    }
}
