// common.js: what the store's slices share: pod keys, times, and a Map whose
// reads are tracked by signals.

import { signal } from '../signals.js';

/** podKey({namespace, name}) -> "namespace/name". */
export function podKey(ref) {
  return `${ref.namespace}/${ref.name}`;
}

/** Milliseconds since the epoch of an RFC 3339 time, or null. */
export function toMillis(t) {
  if (t == null || t === '') return null;
  if (typeof t === 'number') return t;
  const ms = Date.parse(t);
  // Go's zero time (0001-01-01) means "unset".
  return Number.isNaN(ms) || ms < 0 ? null : ms;
}

/**
 * An event whose object has another uid than the one held is about an older
 * object of the same name.
 */
export function sameUid(held, ref) {
  return !ref.uid || !held.uid || held.uid === ref.uid;
}

function cmp(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

const NATURAL = new Intl.Collator('en', { numeric: true });

/** Names as a person orders them: rl-2 before rl-10. */
export function natural(a, b) {
  return NATURAL.compare(a, b) || cmp(a, b);
}

/**
 * keyedMap is a Map of signals. Reading a key subscribes to that key alone;
 * reading the keys, the size, or a key that is missing subscribes to
 * additions and removals. Values are replaced, never changed in place: a new
 * object is what tells a reader that something changed. Insertion order is
 * kept, and trim drops the oldest. entriesAll reads every value at once,
 * depending on any write rather than on each key.
 */
export function keyedMap() {
  const items = new Map();
  // The same values, unwrapped: what peek and entriesAll read (a signal's
  // peek costs more than a Map's get, 20,000 times over).
  const plain = new Map();
  // Counts additions and removals: what readers of the key set depend on.
  const membership = signal(0);
  const track = () => membership.value;
  // Counts every write: what a reader of all the values at once depends on
  // (one signal, rather than one per key: a computed over 20,000 pods
  // would otherwise track 20,000 signals).
  const version = signal(0);
  const wrote = () => { version.value = version.peek() + 1; };
  const changed = () => { membership.value = membership.peek() + 1; wrote(); };
  function drop(key) {
    const s = items.get(key);
    items.delete(key);
    plain.delete(key);
    // Whoever read this key holds its signal, not the membership.
    s.value = undefined;
  }
  return {
    get(key) {
      const s = items.get(key);
      if (s) return s.value;
      track();
      return undefined;
    },
    peek(key) {
      return plain.get(key);
    },
    has(key) {
      track();
      return items.has(key);
    },
    /** The size, without subscribing. */
    peekSize() {
      return items.size;
    },
    get size() {
      track();
      return items.size;
    },
    keys() {
      track();
      return [...items.keys()];
    },
    /**
     * Every [key, value] pair, in insertion order; the reader depends on
     * one signal that any write changes (see version above). It iterates
     * the map itself, copying nothing: read it through before writing.
     */
    entriesAll() {
      version.value;
      return plain.entries();
    },
    /** Every [key, value] pair, in insertion order, without subscribing (a saved state). */
    pairs() {
      return Array.from(plain);
    },
    /** Subscribes to every write (for a reader that then peeks). */
    changes() {
      return version.value;
    },
    /** Every value; the reader depends on each of them. */
    values() {
      track();
      return Array.from(items.values(), (s) => s.value);
    },
    set(key, value) {
      plain.set(key, value);
      const s = items.get(key);
      if (s) {
        s.value = value;
        wrote();
        return;
      }
      items.set(key, signal(value));
      changed();
    },
    delete(key) {
      if (!items.has(key)) return false;
      drop(key);
      changed();
      return true;
    },
    /** Drops the oldest keys until limit remain. */
    trim(limit) {
      if (items.size <= limit) return;
      for (const key of items.keys()) {
        if (items.size <= limit) break;
        drop(key);
      }
      changed();
    },
    /** Holds exactly these [key, value] pairs from now on, in their order. */
    assign(pairs) {
      const old = new Map(items);
      items.clear();
      plain.clear();
      for (const [key, value] of pairs) {
        plain.set(key, value);
        const s = old.get(key);
        old.delete(key);
        if (s) s.value = value;
        items.set(key, s || signal(value));
      }
      for (const s of old.values()) s.value = undefined;
      changed();
    },
  };
}
