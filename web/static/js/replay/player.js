// player.js: plays a recording (recording.js) into the page's store: play,
// pause, step one event or one cycle, seek, speed. The views read the store
// as they do live; the player bar reads player.state. A seek loads the
// nearest keyframe (a saved state of the store, one every KEYFRAME_EVERY
// events, made once when the recording opens) and applies the events from
// there, so that it costs the same anywhere in a long recording. No DOM:
// the frame timer and the clock are injectable, for tests.

import { signal } from '../signals.js';
import { ApiError } from '../net/api.js';
import { createStore } from '../store/index.js';
import {
  advance, clampPosition, cycleRecord, detailsBefore, eventsToApply, nextCycleEnd, podCycleSummaries, seekStart, startPosition, timeAt,
} from './recording.js';

/** Events between two keyframes: a seek applies fewer than this many. */
export const KEYFRAME_EVERY = 1000;
// The cycles whose detail (points, Filter matrix, Score table) the store
// keeps in a replay: a seek builds each from its events, parsing its
// matrices, so fewer cost less. The inspector gets any other cycle from the
// recording (the player's api), as a live page gets it over REST.
export const REPLAY_DETAILS = 10;
// Cycles read back from the recording (cycleRecord) kept, with their event
// count: the same record again keeps the inspector's tables as they are.
const RECORDS_KEPT = 8;
// Events one frame applies at most, at "as fast as possible" or after the
// page was hidden: the views paint between.
const MAX_PER_FRAME = 400;
// While keyframes are made, the page gets the main thread back this often.
const BUILD_SLICE_MS = 40;

const READ_ONLY = 'this page replays a recording: there is no cluster behind it, and nothing here changes one';

/**
 * An API that answers nothing and sends nothing (every call fails, saying
 * why), with fallback's answers where it has them: the player's, or the
 * page's while a recording opens.
 */
export function refusingApi(fallback = {}) {
  return new Proxy(fallback, {
    get(target, name) {
      if (name in target) return target[name];
      return async () => { throw new ApiError(0, READ_ONLY); };
    },
  });
}

/**
 * createPlayer returns the player of rec (parseRecording's result) into
 * store. Call prepare() once: it makes the keyframes, then seeks to where
 * the recording says playback starts (its header's since).
 */
export function createPlayer({
  rec,
  store,
  every = KEYFRAME_EVERY,
  frame = (fn) => (globalThis.requestAnimationFrame ? globalThis.requestAnimationFrame(fn) : setTimeout(fn, 16)),
  cancelFrame = (id) => (globalThis.cancelAnimationFrame ? globalThis.cancelAnimationFrame(id) : clearTimeout(id)),
  now = () => (globalThis.performance ? globalThis.performance.now() : Date.now()),
  pause: yieldToPage = () => new Promise((resolve) => setTimeout(resolve, 0)),
}) {
  store.setLimits({ details: REPLAY_DETAILS });
  const limits = store.limits;
  // position: events applied (0: the snapshot's state; length: all);
  // prepared: keyframes made so far, out of keyframes.
  const state = signal({
    ready: false, position: 0, time: timeAt(rec, 0), playing: false, speed: 1, prepared: 0, keyframes: Math.floor(rec.length / every) + 1,
  });
  const keyframes = [];
  let timer = null;
  let lastTick = 0;
  let carry = 0;
  // The cycle showInspected last put in the store, and how many of its events.
  let shown = { id: null, record: null };
  // Cycle id -> its record as last read back from the recording.
  const records = new Map();

  /** cycleRecord, the same object while the cycle has no new event before p. */
  function recordOf(id, p) {
    const list = rec.cycleEvents.get(Number(id)) || [];
    let count = 0;
    while (count < list.length && list[count] < p) count++;
    const old = records.get(Number(id));
    if (old && old.count === count) return old.record;
    const record = cycleRecord(rec, id, p);
    records.delete(Number(id));
    records.set(Number(id), { count, record });
    if (records.size > RECORDS_KEPT) records.delete(records.keys().next().value);
    return record;
  }

  function set(patch) {
    state.value = { ...state.peek(), ...patch };
  }

  function eventsOf(indices) {
    const list = new Array(indices.length);
    for (let k = 0; k < indices.length; k++) list[k] = rec.event(indices[k]);
    return list;
  }

  /** Applies the events that take target from position from to position to. */
  function applyTo(target, from, to, keep = limits) {
    target.applyMessage({ type: 'events', events: eventsOf(eventsToApply(rec, from, to, keep)) });
  }

  /**
   * A keyframe: the builder's state without its cycle details, whose
   * Filter and Score matrices would make the keyframes weigh as much as
   * the recording again; a seek builds the details it needs.
   */
  function keyframe(builder) {
    const s = builder.saveState();
    return { ...s, cycles: { ...s.cycles, details: [], weights: [], weight: 0 } };
  }

  /** Makes the keyframes in a store no view reads, a slice at a time. */
  async function prepare() {
    const builder = createStore({ limits, now: () => rec.startTime });
    builder.applyMessage(rec.snapshot);
    keyframes.push(keyframe(builder));
    set({ prepared: 1 });
    let sliceStart = now();
    // Keyframes hold no details: the builder needs none of their events.
    const noDetails = { ...limits, details: 0 };
    for (let k = every; k <= rec.length; k += every) {
      applyTo(builder, k - every, k, noDetails);
      keyframes.push(keyframe(builder));
      if (now() - sliceStart > BUILD_SLICE_MS) {
        set({ prepared: keyframes.length });
        await yieldToPage();
        sliceStart = now();
      }
    }
    store.inBatch(() => {
      store.loadState(keyframes[0]);
      set({ ready: true, prepared: keyframes.length });
      seek(startPosition(rec));
    });
  }

  /** Shows the state after the first p events. */
  function seek(p) {
    if (!state.peek().ready) return;
    const from = state.peek().position;
    const to = clampPosition(rec, p);
    const start = seekStart(from, to, every);
    store.inBatch(() => {
      if (start !== from) {
        store.loadState(keyframes[start / every]);
        store.putDetails(detailsBefore(rec, start, to, limits).map(({ id, indices }) => ({ id, events: eventsOf(indices) })));
      }
      applyTo(store, start, to);
      showInspected(to);
      carry = 0;
      set({ position: to, time: timeAt(rec, to), playing: state.peek().playing && to < rec.length });
    });
    if (!state.peek().playing) stopTimer();
  }

  /**
   * The cycle the inspector shows, when the store keeps no detail of it,
   * as the recording tells it at position p: at once, so that the
   * inspector does not show it loading after a seek, and anew as its
   * events come while playing.
   */
  function showInspected(p) {
    const key = store.page.selectedPod.peek();
    if (!key) return;
    const view = store.cycleView(key, store.page.selectedCycle.peek());
    if (view.id == null || view.source === 'live') return;
    const r = recordOf(view.id, p);
    if (!r || (view.source === 'fetched' && shown.id === view.id && shown.record === r)) return;
    store.addFetchedCycle(r);
    shown = { id: view.id, record: r };
  }

  function stopTimer() {
    if (timer != null) cancelFrame(timer);
    timer = null;
  }

  function tick() {
    timer = null;
    const s = state.peek();
    if (!s.playing) return;
    const t = now();
    const next = advance(rec, s.position, carry, t - lastTick, s.speed, MAX_PER_FRAME);
    lastTick = t;
    if (next.position > s.position) {
      store.inBatch(() => {
        applyTo(store, s.position, next.position);
        showInspected(next.position);
        set({ position: next.position, time: timeAt(rec, next.position) });
      });
    }
    carry = next.carry;
    if (next.position >= rec.length) set({ playing: false });
    else timer = frame(tick);
  }

  function play() {
    const s = state.peek();
    if (!s.ready || s.playing) return;
    // At the end, play starts again from the beginning.
    if (s.position >= rec.length) seek(0);
    set({ playing: true });
    carry = 0;
    lastTick = now();
    timer = frame(tick);
  }

  function pause() {
    set({ playing: false });
    stopTimer();
  }

  /** The REST API as far as a recording answers it: the cycles so far; everything else is refused. */
  const api = refusingApi({
    cycle: async (id) => {
      const r = recordOf(id, state.peek().position);
      if (!r) throw new ApiError(404, `cycle ${id} is not in the recording up to here`);
      return r;
    },
    cycles: async (pod, limit = 50) => ({ items: pod ? podCycleSummaries(rec, pod, state.peek().position, limit) : [] }),
    events: async (since) => ({ lastSeq: since, more: false, events: [] }),
  });

  return {
    state,
    api,
    get length() { return rec.length; },
    get recording() { return rec; },
    prepare,
    seek,
    play,
    pause,
    toggle() {
      if (state.peek().playing) pause();
      else play();
    },
    stepEvent() {
      pause();
      seek(state.peek().position + 1);
    },
    stepBack() {
      pause();
      seek(state.peek().position - 1);
    },
    /** To the end of the next scheduling cycle (its cycleEnd) or binding (its bindingEnd). */
    stepCycle() {
      pause();
      seek(nextCycleEnd(rec, state.peek().position));
    },
    setSpeed(speed) {
      carry = 0;
      set({ speed: Number(speed) > 0 ? Number(speed) : 1 });
    },
    /** Stops playing for good (another recording opens). */
    close() {
      pause();
    },
  };
}
