// recording.js: a recording (GET /api/v1/recording, `scenario run --record`)
// read back, and the player's arithmetic: where playback is, where a step
// goes, how long to wait before the next event, which events a seek applies.
// No DOM, no timers: tested with node --test.
//
// A recording is gzip-compressed JSON lines: a header, the stream's
// snapshot message, one stream event per line in seq order, and a trailer
// {"type": "end", "events", "lastSeq"} that tells a whole file from a cut-off
// one. Fields a reader does not know are ignored: a file made today still
// opens once the schema gains fields.

export const RECORDING_FORMAT = 'minisched.recording/v1';
export const STREAM_SCHEMA = 'minisched.stream/v1';

/** Playback waits at most this long between two events, however long the recorded gap. */
export const MAX_GAP_MS = 2000;
/** The speeds offered; Infinity is "as fast as possible". */
export const SPEEDS = Object.freeze([0.25, 0.5, 1, 2, 4, 8, 16, Infinity]);

/** A file the dashboard cannot replay; the message says why, in words. */
export class RecordingError extends Error {}

/** Whether two "name/vN[.M]" versions share name and major version N. */
export function sameMajor(got, want) {
  const [gotName, gotVersion] = String(got || '').split('/v');
  const [wantName, wantVersion] = String(want).split('/v');
  return gotVersion !== undefined && gotName === wantName && gotVersion.split('.')[0] === wantVersion.split('.')[0];
}

// The kinds whose events belong to a cycle's detail only: a seek may leave
// them out for cycles whose detail the store would drop anyway.
const DETAIL_KINDS = new Set(['point', 'filter', 'score']);
// The kinds that carry a Filter or Score matrix, one row per node: the bulk
// of a recording. They stay text until applied (parsing a recording of
// 2,000 pods on 200 nodes whole takes as long and twice the memory).
// Their head, as the server writes it; a line that does not match is parsed
// whole, as any other.
const MATRIX_HEAD = /^\{"seq":(\d+),"time":"([^"]*)","kind":"(filter|score)",(?:"pod":\{"namespace":"([^"]*)","name":"([^"]*)"[^{}]*\},)?"cycle":(\d+),/;

function parseLine(line, what) {
  try {
    return JSON.parse(line);
  } catch {
    throw new RecordingError(`${what} is not JSON: the file is damaged`);
  }
}

/** Milliseconds of an RFC 3339 time; null when there is none. */
function millis(t) {
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? null : ms;
}

/**
 * Reads a recording's text (its lines, unpacked). Returns
 * {header, snapshot, length, seq, time, kind, cycle, pod, event(i)}:
 * per event index its seq, time (ms), kind, cycle id (0: none) and pod key
 * ('' for none) in flat arrays, and event(i) the event itself. Throws a
 * RecordingError that says what is wrong: not a recording, another format
 * version, events out of order, cut off (no trailer), a trailer that does
 * not count what the file holds.
 */
export function parseRecording(text) {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  let header;
  try {
    header = JSON.parse(lines[0] ?? '');
  } catch {
    header = null;
  }
  if (!header || typeof header !== 'object' || typeof header.format !== 'string') {
    throw new RecordingError(`not a minisched recording: its first line is not a recording's header (want {"format": "${RECORDING_FORMAT}", ...})`);
  }
  if (!sameMajor(header.format, RECORDING_FORMAT)) {
    throw new RecordingError(`a recording of format ${header.format}: this dashboard reads ${RECORDING_FORMAT} (a newer minisched may open it)`);
  }
  if (lines.length < 2) throw new RecordingError('the recording ends before its snapshot: the file is cut off');
  const snapshot = parseLine(lines[1], "the recording's snapshot");
  if (snapshot?.type !== 'snapshot' || !sameMajor(snapshot.schema, STREAM_SCHEMA)) {
    throw new RecordingError(`the recording's second line is a "${snapshot?.type}" message of schema "${snapshot?.schema}", not a snapshot of ${STREAM_SCHEMA}`);
  }
  const n = lines.length - 2;
  const seq = new Float64Array(n);
  const time = new Float64Array(n);
  const cycle = new Float64Array(n);
  const kind = new Array(n);
  const pod = new Array(n);
  // Parsed events; a matrix event is its line until applied.
  const events = new Array(n);
  let count = 0;
  // As the server's reader: events in order; the store skips any the snapshot holds.
  let last = 0;
  let prevTime = millis(snapshot.time) ?? 0;
  let trailer = null;
  for (let i = 2; i < lines.length; i++) {
    const line = lines[i];
    const head = MATRIX_HEAD.exec(line);
    let e;
    if (head) {
      e = line;
      seq[count] = Number(head[1]);
      time[count] = millis(head[2]) ?? prevTime;
      kind[count] = head[3];
      pod[count] = head[4] === undefined ? '' : `${head[4]}/${head[5]}`;
      cycle[count] = Number(head[6]);
    } else {
      e = parseLine(line, `line ${i + 1} of the recording`);
      if (e?.type === 'end') {
        trailer = e;
        if (i !== lines.length - 1) throw new RecordingError(`the recording goes on after its trailer (line ${i + 1}): the file is damaged`);
        break;
      }
      seq[count] = typeof e?.seq === 'number' ? e.seq : NaN;
      time[count] = millis(e.time) ?? prevTime;
      kind[count] = e.kind;
      cycle[count] = e.cycle || 0;
      pod[count] = e.pod ? `${e.pod.namespace}/${e.pod.name}` : '';
    }
    if (!(seq[count] > last)) {
      throw new RecordingError(`event ${count + 1} of the recording (line ${i + 1}) has no sequence number after ${last}: the file is damaged`);
    }
    last = seq[count];
    prevTime = time[count];
    events[count] = e;
    count += 1;
  }
  if (!trailer) {
    throw new RecordingError(`the recording is cut off: it ends after ${count} events with no trailer (the download or the copy stopped early; save it again)`);
  }
  if (trailer.events !== count || (count > 0 && trailer.lastSeq !== last)) {
    throw new RecordingError(`the recording's trailer counts ${trailer.events} events up to ${trailer.lastSeq}, the file holds ${count} up to ${last}: the file is damaged`);
  }
  const cut = (a) => a.subarray(0, count);
  const rec = {
    header,
    snapshot,
    length: count,
    seq: cut(seq),
    time: cut(time),
    cycle: cut(cycle),
    kind: kind.slice(0, count),
    pod: pod.slice(0, count),
    startTime: millis(snapshot.time) ?? (count ? time[0] : 0),
    /** Event i, parsed (a matrix event is parsed anew each time: it is not kept). */
    event(i) {
      const e = events[i];
      return typeof e === 'string' ? JSON.parse(e) : e;
    },
  };
  return indexRecording(rec);
}

/**
 * Adds what the player looks up: per event the index of its cycle's
 * cycleStart (-1: the cycle started before the recording), the number of
 * cycleStarts before each index, each cycle's events and each pod's cycles.
 */
function indexRecording(rec) {
  const n = rec.length;
  const startOf = new Int32Array(n).fill(-1);
  const startsBefore = new Int32Array(n + 1);
  const resetsBefore = new Int32Array(n + 1);
  const cycleEvents = new Map(); // cycle id -> event indices
  const podCycles = new Map(); // pod key -> cycle ids, oldest first
  const latestStart = new Map(); // cycle id -> index of its newest cycleStart so far
  for (let i = 0; i < n; i++) {
    const k = rec.kind[i];
    startsBefore[i + 1] = startsBefore[i] + (k === 'cycleStart' ? 1 : 0);
    resetsBefore[i + 1] = resetsBefore[i] + (k === 'reset' ? 1 : 0);
    const c = rec.cycle[i];
    if (!c) continue;
    if (k === 'cycleStart') {
      latestStart.set(c, i);
      const key = rec.pod[i];
      if (key) {
        if (!podCycles.has(key)) podCycles.set(key, []);
        podCycles.get(key).push(c);
      }
    }
    startOf[i] = latestStart.get(c) ?? -1;
    if (!cycleEvents.has(c)) cycleEvents.set(c, []);
    cycleEvents.get(c).push(i);
  }
  return { ...rec, startOf, startsBefore, resetsBefore, cycleEvents, podCycles };
}

/** The position to start at: after the events up to the header's since (the snapshot's state when none). */
export function startPosition(rec) {
  const since = rec.header.since;
  if (!since) return 0;
  let i = 0;
  while (i < rec.length && rec.seq[i] <= since) i++;
  return i;
}

/**
 * The position where a scenario run's step is over: before the run's first
 * event of a later step (its next step waiting, or running), so that the
 * board shows what the steps up to this one left; the end when the run
 * went no further in the recording.
 */
export function stepPosition(rec, runId, step) {
  for (let i = 0; i < rec.length; i++) {
    if (rec.kind[i] !== 'scenario') continue;
    const s = rec.event(i)?.scenario;
    if (s?.id === runId && s.step > step) return i;
  }
  return rec.length;
}

/** Keeps a position within the recording: 0 (the snapshot) to length (every event applied). */
export function clampPosition(rec, p) {
  return Math.max(0, Math.min(rec.length, Math.round(Number(p) || 0)));
}

/**
 * The position one cycle on: after the next event that ends a scheduling
 * cycle (cycleEnd) or its binding (bindingEnd); the end when none follows.
 */
export function nextCycleEnd(rec, p) {
  for (let i = p; i < rec.length; i++) {
    if (rec.kind[i] === 'cycleEnd' || rec.kind[i] === 'bindingEnd') return i + 1;
  }
  return rec.length;
}

/** The recorded time at a position: the last applied event's, or the snapshot's. */
export function timeAt(rec, p) {
  return p > 0 ? rec.time[p - 1] : rec.startTime;
}

/** The seq of the state at a position: the last applied event's, or the snapshot's. */
export function seqAt(rec, p) {
  return p > 0 ? rec.seq[p - 1] : rec.snapshot.seq ?? 0;
}

/** Event i in a few words: its kind and its pod ("cycleEnd default/web-1"). */
export function describeEvent(rec, i) {
  if (i < 0 || i >= rec.length) return '';
  return rec.pod[i] ? `${rec.kind[i]} ${rec.pod[i]}` : rec.kind[i];
}

/** A speed's name: "0.25×" ... "16×", and "as fast as possible" for Infinity. */
export function speedLabel(speed) {
  return speed < Infinity ? `${speed}×` : 'as fast as possible';
}

/**
 * How long playback waits before applying event i, in wall-clock ms: the
 * recorded gap since the event before it over speed, at most MAX_GAP_MS
 * (an idle minute of a lesson must not stall the replay); 0 at Infinity.
 */
export function gapBefore(rec, i, speed, cap = MAX_GAP_MS) {
  if (!(speed < Infinity)) return 0;
  const gap = Math.max(0, rec.time[i] - timeAt(rec, i));
  return Math.min(gap / speed, cap);
}

/**
 * Playback after elapsed wall-clock ms more: from position p, with carry ms
 * already waited for event p, applies every event whose gap is waited for,
 * up to max events. Returns {position, carry}.
 */
export function advance(rec, p, carry, elapsed, speed, max = Infinity, cap = MAX_GAP_MS) {
  let position = p;
  let waited = carry + elapsed;
  let applied = 0;
  while (position < rec.length && applied < max) {
    const gap = gapBefore(rec, position, speed, cap);
    if (gap > waited) break;
    waited -= gap;
    position += 1;
    applied += 1;
  }
  // At the end, or held back by max, nothing is owed to the next event.
  return { position, carry: position >= rec.length || applied >= max ? 0 : waited };
}

/**
 * Where a seek from position from to position to starts applying events:
 * from here, going on forwards, or from the keyframe at or before to (one
 * every `every` events, the first at 0: the snapshot's state), whichever
 * leaves fewer events to apply.
 */
export function seekStart(from, to, every) {
  const key = Math.floor(to / every) * every;
  return from <= to && to - from <= to - key ? from : key;
}

/**
 * The events that take the store from position from to position to, in
 * order (an Int32Array of indices). Point, Filter and Score events are left
 * out for the cycles whose detail the store drops by then anyway: the
 * store keeps the details of the newest limits.details cycles to start
 * (store/cycles.js), so a cycle with that many newer cycleStarts before to
 * has none there. They are most of a recording's weight.
 */
export function eventsToApply(rec, from, to, limits) {
  const target = clampPosition(rec, to);
  const keep = limits.details;
  const starts = rec.startsBefore[target];
  const indices = new Int32Array(Math.max(0, target - from));
  let n = 0;
  for (let i = from; i < target; i++) {
    if (DETAIL_KINDS.has(rec.kind[i])) {
      const s = rec.startOf[i];
      // No cycleStart recorded: the store keeps no detail of that cycle.
      if (s < 0 || starts - rec.startsBefore[s + 1] >= keep) continue;
    }
    indices[n++] = i;
  }
  return indices.subarray(0, n);
}

/**
 * The cycle details a store loaded from a keyframe at position from (which
 * holds none) lacks at position to: of the cycles that started before from,
 * those still among the newest limits.details to start before to, with no
 * reset since their start. Returns [{id, indices}], oldest first: indices
 * their events before from.
 */
export function detailsBefore(rec, from, to, limits) {
  const out = [];
  const starts = rec.startsBefore[clampPosition(rec, to)];
  for (let s = from - 1; s >= 0; s--) {
    if (starts - rec.startsBefore[s + 1] >= limits.details) break;
    if (rec.kind[s] !== 'cycleStart') continue;
    if (rec.resetsBefore[from] - rec.resetsBefore[s + 1] > 0) break;
    const id = rec.cycle[s];
    out.push({ id, indices: rec.cycleEvents.get(id).filter((i) => i >= s && i < from && rec.startOf[i] === s) });
  }
  return out.reverse();
}

/**
 * GET /api/v1/cycles/{id} as the recording tells it at position p: the
 * cycle's newest summary and its events so far; null when the recording
 * holds none of it.
 */
export function cycleRecord(rec, id, p) {
  const list = (rec.cycleEvents.get(Number(id)) || []).filter((i) => i < p && i >= rec.startOf[i]);
  if (!list.length) return null;
  const events = list.map((i) => rec.event(i));
  const summary = events.findLast((e) => e.summary)?.summary;
  if (!summary) return null;
  return { ...summary, events, truncated: rec.startOf[list[0]] < 0 };
}

/** GET /api/v1/cycles?pod= as the recording tells it at position p: the pod's cycle summaries, newest first. */
export function podCycleSummaries(rec, key, p, limit = 50) {
  const out = [];
  const ids = rec.podCycles.get(key) || [];
  for (let j = ids.length - 1; j >= 0 && out.length < limit; j--) {
    const list = rec.cycleEvents.get(ids[j]) || [];
    for (let k = list.length - 1; k >= 0; k--) {
      const i = list[k];
      if (i >= p || rec.kind[i] === 'point' || rec.kind[i] === 'filter' || rec.kind[i] === 'score') continue;
      const e = rec.event(i);
      if (e.summary) {
        out.push(e.summary);
        break;
      }
    }
  }
  return out;
}

/**
 * Unpacks a recording: body is a Blob (a file) or a ReadableStream of its
 * bytes (a fetch's body). The gzip is undone with DecompressionStream; a
 * file whose compressed data stops early is read as far as it goes, so that
 * the error says it is cut off. Resolves with parseRecording's result.
 */
export async function readRecording(body) {
  const stream = typeof body?.stream === 'function' ? body.stream() : body;
  const [probe, bytes] = stream.tee();
  const reader = probe.getReader();
  const first = await reader.read();
  reader.cancel().catch(() => {});
  const magic = first.value || new Uint8Array();
  if (magic.length < 2 || magic[0] !== 0x1f || magic[1] !== 0x8b) {
    bytes.cancel().catch(() => {});
    throw new RecordingError('not a minisched recording: the file is not gzip-compressed (a recording is a .recording.gz file from GET /api/v1/recording or scenario run --record)');
  }
  // The unpacked bytes, kept as they come: when the compressed data stops
  // early, what came before it still tells how far the file goes.
  const parts = [];
  const out = bytes.pipeThrough(new DecompressionStream('gzip')).getReader();
  let broken = null;
  for (;;) {
    let chunk;
    try {
      chunk = await out.read();
    } catch (err) {
      broken = err;
      break;
    }
    if (chunk.done) break;
    parts.push(chunk.value);
  }
  const text = await new Blob(parts).text();
  try {
    return parseRecording(text);
  } catch (err) {
    // A file that stops mid-way usually stops mid-line too.
    if (!broken || /cut off/.test(err.message)) throw err;
    throw new RecordingError(`the recording is cut off or damaged: its compressed data stops early (${err.message})`);
  }
}
