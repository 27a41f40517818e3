//! What the server keeps between requests, each kind in a map of its own with a budget:
//! values tagged with the position they were read at, emptied when one more would pass the
//! budget. `server::cache` keeps the library's pages, prompts, resources and URI templates
//! in them; `render` its compiled templates; `arguments` its compiled patterns. A
//! `Doorkeeper` lets a map keep only what is asked for again.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The position for values whose key names their content (a digest, a content hash), which
/// no change of the library changes.
pub(crate) const ANY_POSITION: i64 = 0;

/// Values each tagged with the change-log position they were read at, with a budget in
/// bytes: when adding one would pass `budget` (each entry, key and value, charged what the
/// map's `size_of` says), the map is emptied first. Keys are looked up on every request: a
/// fast hash, seeded per process.
pub(crate) struct Memo<K, V> {
    entries: Mutex<Entries<K, V>>,
    budget: usize,
    size_of: fn(&K, &V) -> usize,
}

struct Entries<K, V> {
    map: HashMap<K, (i64, Arc<V>), foldhash::fast::RandomState>,
    used: usize,
}

impl<K: Hash + Eq, V> Memo<K, V> {
    pub(crate) fn sized(budget: usize, size_of: fn(&K, &V) -> usize) -> Memo<K, V> {
        Memo {
            entries: Mutex::new(Entries {
                map: HashMap::default(),
                used: 0,
            }),
            budget,
            size_of,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Entries<K, V>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The value kept under `key`, if it was read at `position`.
    pub(crate) fn get<Q>(&self, key: &Q, position: i64) -> Option<Arc<V>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let entries = self.lock();
        let (at, kept) = entries.map.get(key)?;
        (*at == position).then(|| Arc::clone(kept))
    }

    /// Keeps `value` under `key` as read at `position`, unless it alone is over the budget.
    pub(crate) fn keep(&self, key: K, position: i64, value: &Arc<V>) {
        let size = (self.size_of)(&key, value);
        if size > self.budget {
            return;
        }
        let mut entries = self.lock();
        // What it replaces is not counted against it.
        if let Some((_, old)) = entries.map.remove(&key) {
            entries.used = entries.used.saturating_sub((self.size_of)(&key, &old));
        }
        if entries.used + size > self.budget {
            entries.map.clear();
            entries.used = 0;
        }
        entries.used += size;
        entries.map.insert(key, (position, Arc::clone(value)));
    }
}

/// Keys asked for recently, so that a map keeps only what is asked for again: `admits` says
/// yes to a key offered before among about the last `WINDOW` keys offered for the first
/// time, and no (remembering it) otherwise. Reads spread over a large library then keep
/// nothing, where they filled and emptied the map over and over, each document kept costing
/// its memory and never read again; a working set read in turns is kept from its second
/// turn. One bit per key in `BITS`, all forgotten at once every `WINDOW` new keys (two keys
/// may share a bit: one may then be kept on its first sight, which costs only the keeping).
pub(crate) struct Doorkeeper {
    seen: Mutex<Seen>,
    hasher: foldhash::fast::RandomState,
}

struct Seen {
    bits: Box<[u64]>,
    offered: usize,
}

/// Bits of the doorkeeper: 8 KiB, sixteen per key in the window, so that few new keys find
/// their bit set by another.
const BITS: usize = 1 << 16;
/// New keys after which the doorkeeper forgets them all: four times the thousand documents of
/// 2 KB that `server::cache` keeps, so a working set that fits is kept whatever its order.
const WINDOW: usize = 4096;

impl Default for Doorkeeper {
    fn default() -> Doorkeeper {
        Doorkeeper {
            seen: Mutex::new(Seen {
                bits: vec![0; BITS / 64].into_boxed_slice(),
                offered: 0,
            }),
            hasher: foldhash::fast::RandomState::default(),
        }
    }
}

impl Doorkeeper {
    /// Whether `key` was offered recently; remembers it when it was not.
    pub(crate) fn admits<Q: Hash + ?Sized>(&self, key: &Q) -> bool {
        use std::hash::BuildHasher;
        let bit = self.hasher.hash_one(key) as usize % BITS;
        let (word, mask) = (bit / 64, 1u64 << (bit % 64));
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        if seen.bits[word] & mask != 0 {
            return true;
        }
        if seen.offered == WINDOW {
            seen.bits.fill(0);
            seen.offered = 0;
        }
        seen.bits[word] |= mask;
        seen.offered += 1;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_doorkeeper_admits_a_key_seen_again_within_its_window_only() {
        let doorkeeper = Doorkeeper::default();
        assert!(!doorkeeper.admits("a"), "a first sight is not admitted");
        assert!(doorkeeper.admits("a"), "a second one is");
        // A thousand keys in turns: admitted from the second turn.
        let turn = |doorkeeper: &Doorkeeper| {
            (0..1000)
                .filter(|i| doorkeeper.admits(&format!("k{i}")))
                .count()
        };
        let first = turn(&doorkeeper);
        assert!(first < 100, "{first} of 1,000 new keys admitted");
        assert_eq!(turn(&doorkeeper), 1000);
        // Keys that come back only after many more new ones are forgotten: nearly none of
        // 65,536 in turns is admitted on its second turn.
        let many = Doorkeeper::default();
        let spread = |doorkeeper: &Doorkeeper| {
            (0..65_536)
                .filter(|i| doorkeeper.admits(&format!("d{i}")))
                .count()
        };
        spread(&many);
        let again = spread(&many);
        assert!(again < 65_536 / 10, "{again} of 65,536 admitted again");
    }

    #[test]
    fn a_memo_keeps_what_its_budget_holds_and_forgets_all_past_it() {
        let memo: Memo<String, String> = Memo::sized(10, |_, value| value.len());
        memo.keep("a".into(), 1, &Arc::new("12345".into()));
        memo.keep("b".into(), 1, &Arc::new("1234".into()));
        assert_eq!(
            memo.get("a", 1).as_deref().map(String::as_str),
            Some("12345")
        );
        // Not kept at another position, and one value over the whole budget is never kept.
        assert!(memo.get("a", 2).is_none());
        memo.keep("huge".into(), 1, &Arc::new("x".repeat(11)));
        assert!(memo.get("huge", 1).is_none());
        assert!(memo.get("b", 1).is_some());
        // Past the budget: everything kept before is forgotten, the new value kept.
        memo.keep("c".into(), 1, &Arc::new("123".into()));
        assert!(memo.get("a", 1).is_none() && memo.get("b", 1).is_none());
        assert!(memo.get("c", 1).is_some());
    }

    #[test]
    fn an_entry_is_charged_for_its_key_as_well_as_its_value() {
        let kept: Memo<String, usize> = Memo::sized(100, |key, value| key.len() + value);
        kept.keep("k".repeat(40), ANY_POSITION, &Arc::new(40));
        assert_eq!(kept.lock().used, 80);
        // 80 + 21 passes 100: the first is forgotten.
        kept.keep("x".into(), ANY_POSITION, &Arc::new(20));
        assert!(kept.get(&"k".repeat(40), ANY_POSITION).is_none());
        assert_eq!(kept.lock().used, 21);
    }

    #[test]
    fn a_value_kept_again_is_counted_once_and_the_budget_holds_in_bytes() {
        let kept: Memo<[u8; 32], usize> = Memo::sized(100, |_, bytes| *bytes);
        let used = |memo: &Memo<[u8; 32], usize>| memo.lock().used;
        kept.keep([1; 32], ANY_POSITION, &Arc::new(60));
        kept.keep([2; 32], ANY_POSITION, &Arc::new(30));
        assert!(kept.get(&[1; 32], ANY_POSITION).is_some());
        assert!(kept.get(&[2; 32], ANY_POSITION).is_some());
        assert_eq!(used(&kept), 90);
        // Kept again under the same key: counted once.
        kept.keep([2; 32], ANY_POSITION, &Arc::new(30));
        assert_eq!(used(&kept), 90);
        // Past the budget: the others are forgotten first.
        kept.keep([3; 32], ANY_POSITION, &Arc::new(20));
        assert!(kept.get(&[1; 32], ANY_POSITION).is_none());
        assert!(kept.get(&[2; 32], ANY_POSITION).is_none());
        assert!(kept.get(&[3; 32], ANY_POSITION).is_some());
        assert_eq!(used(&kept), 20);
        // Over the budget alone: not kept, and the rest stays.
        kept.keep([4; 32], ANY_POSITION, &Arc::new(101));
        assert!(kept.get(&[4; 32], ANY_POSITION).is_none());
        assert!(kept.get(&[3; 32], ANY_POSITION).is_some());
        assert_eq!(used(&kept), 20);
    }
}
