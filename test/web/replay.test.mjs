// The replay of recordings: reading and checking a file, the player's
// arithmetic (positions, steps, timing, what a seek applies), and that a
// seek anywhere, from any keyframe, leaves the store as applying every event
// from the start does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import {
  advance, cycleRecord, describeEvent, eventsToApply, gapBefore, MAX_GAP_MS, nextCycleEnd, parseRecording, podCycleSummaries,
  readRecording, RecordingError, sameMajor, seekStart, seqAt, startPosition, stepPosition, timeAt,
} from '../../web/static/js/replay/recording.js';
import { createPlayer } from '../../web/static/js/replay/player.js';
import { createStore } from '../../web/static/js/store/index.js';
import { ApiError } from '../../web/static/js/net/api.js';
import { shortcut } from '../../web/static/js/route.js';
import { E, nodeSummary, podSummary, resetSeq, snapshot, successfulCycle } from './fixtures.mjs';

const HEADER = { format: 'minisched.recording/v1', schema: 'minisched.stream/v1', created: '2026-01-01T10:00:00Z' };

/** A recording's text: header, snapshot, events, trailer (trailer false: cut off). */
function recordingText({ header = HEADER, snap, events, trailer = true }) {
  const lines = [JSON.stringify(header), JSON.stringify(snap), ...events.map((e) => JSON.stringify(e))];
  if (trailer) lines.push(JSON.stringify({ type: 'end', events: events.length, lastSeq: events.length ? events.at(-1).seq : 0 }));
  return `${lines.join('\n')}\n`;
}

/**
 * A session: nodes, then pods each created, queued and scheduled in a whole
 * cycle (Filter and Score matrices included), one of them failing first and
 * placed on a second try, a deletion, a scenario's progress and a reset.
 */
function session(pods = 12, { reset = true } = {}) {
  resetSeq(0);
  const snap = snapshot({ at: 0 });
  const nodes = ['n1', 'n2', 'n3'];
  const events = nodes.map((n, i) => E.node('added', nodeSummary(n), i * 10));
  let cycle = 0;
  let ms = 100;
  for (let i = 0; i < pods; i++) {
    const name = `p-${i}`;
    events.push(E.pod('added', podSummary(name, { cpu: 100 }), ms));
    events.push(E.queue(name, { action: 'add', to: 'active', event: 'PodAdd', order: `0-${ms}` }, ms + 1));
    if (i === 3) {
      cycle += 1;
      events.push(E.queue(name, { action: 'pop', from: 'active', to: 'inFlight', attempts: 1 }, ms + 2));
      events.push(E.cycleStart(name, cycle, 1, 3, ms + 3));
      events.push(E.cycleEnd(name, cycle, { result: 'unschedulable', plugins: ['NodeResourcesFit'], message: '0/3 nodes are available' }, ms + 4));
      events.push(E.queue(name, { action: 'move', from: 'inFlight', to: 'backoff', attempts: 1, plugins: ['NodeResourcesFit'] }, ms + 5));
      ms += 10;
    }
    cycle += 1;
    events.push(...successfulCycle(name, cycle, i === 3 ? 2 : 1, nodes, { ms: ms + 2 }));
    events.push(E.pod('updated', podSummary(name, { cpu: 100, nodeName: 'n1' }), ms + 14));
    if (i === 5) events.push(E.scenario({ id: 'run-1', name: 'lesson', step: 1, steps: 2, phase: 'running', message: 'half way' }, ms + 15));
    if (i === 7) events.push(E.pod('deleted', podSummary('p-2', { cpu: 100, nodeName: 'n1' }), ms + 16));
    // An idle minute in the middle.
    ms += i === 8 ? 60_000 : 20;
  }
  if (reset) events.push(E.reset(ms + 1), E.node('added', nodeSummary('n9'), ms + 2));
  return { snap, events };
}

test('sameMajor: the same name and major version; a later minor version only adds fields', () => {
  assert.ok(sameMajor('minisched.recording/v1', 'minisched.recording/v1'));
  assert.ok(sameMajor('minisched.recording/v1.4', 'minisched.recording/v1'));
  assert.ok(!sameMajor('minisched.recording/v2', 'minisched.recording/v1'));
  assert.ok(!sameMajor('other/v1', 'minisched.recording/v1'));
  assert.ok(!sameMajor(undefined, 'minisched.recording/v1'));
});

test('a recording reads back: header, snapshot, events by index (matrices parsed when asked), unknown fields ignored', () => {
  const { snap, events } = session(3);
  const text = recordingText({ header: { ...HEADER, format: 'minisched.recording/v1.2', futureField: { x: 1 } }, snap: { ...snap, later: true }, events: events.map((e) => ({ ...e, addedLater: 1 })) });
  const rec = parseRecording(text);
  assert.equal(rec.length, events.length);
  assert.equal(rec.header.created, HEADER.created);
  assert.equal(rec.snapshot.type, 'snapshot');
  const fi = events.findIndex((e) => e.kind === 'filter');
  assert.equal(rec.kind[fi], 'filter');
  assert.equal(rec.pod[fi], `default/${events[fi].pod.name}`);
  assert.equal(rec.cycle[fi], events[fi].cycle);
  assert.equal(rec.seq[fi], events[fi].seq);
  assert.equal(rec.time[fi], Date.parse(events[fi].time));
  assert.deepEqual(rec.event(fi), { ...events[fi], addedLater: 1 });
  assert.deepEqual(rec.event(0), { ...events[0], addedLater: 1 });
  assert.equal(describeEvent(rec, fi), `filter default/${events[fi].pod.name}`);
  assert.equal(describeEvent(rec, 0), 'node');
  assert.equal(seqAt(rec, 0), snap.seq);
  assert.equal(seqAt(rec, rec.length), events.at(-1).seq);
});

test('a file that is not a recording, of another version, cut off or damaged is refused, saying which', () => {
  const { snap, events } = session(2);
  const refused = (text, re) => assert.throws(() => parseRecording(text), (err) => err instanceof RecordingError && re.test(err.message), String(re));
  refused('hello\n', /not a minisched recording/);
  refused(`${JSON.stringify({ hello: 1 })}\n`, /not a minisched recording/);
  refused(recordingText({ header: { ...HEADER, format: 'minisched.recording/v2' }, snap, events }), /minisched\.recording\/v2: this dashboard reads minisched\.recording\/v1/);
  refused(recordingText({ snap: { ...snap, schema: 'minisched.stream/v3' }, events }), /not a snapshot of minisched\.stream\/v1/);
  refused(recordingText({ snap, events, trailer: false }), new RegExp(`cut off: it ends after ${events.length} events with no trailer`));
  refused(`${JSON.stringify(HEADER)}\n`, /cut off/);
  const lines = recordingText({ snap, events }).split('\n');
  // A line cut in half, and events out of order.
  refused([...lines.slice(0, 5), lines[5].slice(0, 20), ...lines.slice(6)].join('\n'), /line 6 of the recording is not JSON/);
  refused([...lines.slice(0, 3), lines[4], lines[3], ...lines.slice(5)].join('\n'), /no sequence number after/);
  const trailer = JSON.stringify({ type: 'end', events: events.length + 1, lastSeq: 999 });
  refused([...lines.slice(0, -2), trailer, ''].join('\n'), /trailer counts/);
});

test('readRecording undoes the gzip, refuses what is not gzip, and calls a truncated file cut off', async () => {
  const { snap, events } = session(4);
  const bytes = gzipSync(Buffer.from(recordingText({ snap, events })));
  const rec = await readRecording(new Blob([bytes]));
  assert.equal(rec.length, events.length);
  // A fetch's body is a stream of the same bytes.
  assert.equal((await readRecording(new Blob([bytes]).stream())).length, events.length);
  await assert.rejects(readRecording(new Blob(['{"format": "minisched.recording/v1"}\n'])), /not gzip-compressed/);
  await assert.rejects(readRecording(new Blob([bytes.subarray(0, Math.floor(bytes.length * 0.6))])), /cut off/);
});

test('positions: where playback starts (the header\'s since), steps by cycle, the time and the gaps', () => {
  const { snap, events } = session(10, { reset: false });
  const rec = parseRecording(recordingText({ header: { ...HEADER, since: events[9].seq }, snap, events }));
  assert.equal(startPosition(rec), 10, 'the events up to since are applied');
  assert.equal(startPosition(parseRecording(recordingText({ snap, events }))), 0);
  // One cycle on: after the next cycleEnd or bindingEnd.
  let p = 0;
  const stops = [];
  while (p < rec.length) {
    p = nextCycleEnd(rec, p);
    stops.push(p);
  }
  assert.ok(stops.slice(0, -1).every((s) => ['cycleEnd', 'bindingEnd'].includes(rec.kind[s - 1])));
  assert.equal(stops.length, events.filter((e) => e.kind === 'cycleEnd' || e.kind === 'bindingEnd').length + (['cycleEnd', 'bindingEnd'].includes(events.at(-1).kind) ? 0 : 1));
  assert.equal(timeAt(rec, 0), Date.parse(snap.time));
  assert.equal(timeAt(rec, 3), rec.time[2]);

  // Gaps follow the recorded ones over speed, capped; none at Infinity.
  const idle = rec.time.findIndex((t, i) => i > 0 && t - rec.time[i - 1] > 50_000);
  assert.ok(idle > 0);
  assert.equal(gapBefore(rec, idle, 1), MAX_GAP_MS);
  assert.equal(gapBefore(rec, idle, Infinity), 0);
  const d = rec.time[5] - rec.time[4];
  assert.equal(gapBefore(rec, 5, 1), d);
  assert.equal(gapBefore(rec, 5, 4), d / 4);
  assert.equal(gapBefore(rec, 5, 0.25), Math.min(d * 4, MAX_GAP_MS));

  // advance: applies what is due, carries the rest, stops at max.
  const at5 = advance(rec, 5, 0, d - 0.5, 1);
  assert.deepEqual(at5, { position: 5, carry: d - 0.5 });
  assert.equal(advance(rec, 5, at5.carry, 0.5, 1).position, 6);
  assert.equal(advance(rec, 0, 0, 0, Infinity, 7).position, 7);
  assert.equal(advance(rec, 0, 0, 0, Infinity).position, rec.length);
  assert.equal(advance(rec, idle, 0, MAX_GAP_MS, 1).position > idle, true, 'an idle minute waits 2 s');
});

test('a seek starts from the nearer of here and the keyframe before the target, and leaves out details the store would drop', () => {
  assert.equal(seekStart(0, 2500, 1000), 2000);
  assert.equal(seekStart(2400, 2500, 1000), 2400);
  assert.equal(seekStart(2600, 2500, 1000), 2000, 'backwards: from a keyframe');
  assert.equal(seekStart(1990, 2010, 1000), 2000);
  const { snap, events } = session(12, { reset: false });
  const rec = parseRecording(recordingText({ snap, events }));
  const all = eventsToApply(rec, 0, rec.length, { details: 1000 });
  assert.equal(all.length, rec.length);
  const few = [...eventsToApply(rec, 0, rec.length, { details: 2 })];
  const left = [...all].filter((i) => !few.includes(i));
  assert.ok(left.length > 0);
  assert.ok(left.every((i) => ['point', 'filter', 'score'].includes(rec.kind[i])));
  // Only the cycles of the last two to start keep their detail events.
  const kept = new Set(few.filter((i) => ['point', 'filter', 'score'].includes(rec.kind[i])).map((i) => rec.cycle[i]));
  assert.deepEqual([...kept].sort((a, b) => a - b), [12, 13]);
});

/** What a store holds, as plain data, to compare two. */
function stateOf(store) {
  const s = store.saveState();
  return {
    nodes: s.cluster.nodes, pods: s.cluster.pods, usage: s.cluster.usage.map(([k, u]) => [k, { ...u, keys: [...u.keys].sort() }]).sort(), bound: s.cluster.bound,
    queue: s.queue.entries.sort(), lanes: s.queue.lanes.map(([name, list]) => [name, list.map((e) => e.key)]).filter(([, l]) => l.length).sort(),
    summaries: s.cycles.summaries, details: s.cycles.details, podInfo: s.cycles.podInfo.sort(), deleted: s.cycles.deleted,
    server: { ...s.server, snapshots: 0 },
  };
}

test('a seek anywhere, from any keyframe or from where the player is, leaves the state that applying every event from the start leaves', async () => {
  const { snap, events } = session(14);
  const rec = parseRecording(recordingText({ snap, events }));
  const store = createStore();
  const player = createPlayer({ rec, store, every: 17, pause: async () => {} });
  await player.prepare();
  const limits = store.limits;
  assert.equal(limits.details, 10, 'a replay keeps the details of the newest 10 cycles');
  store.setLimits({ details: 3 });

  /** The store after the first p events, one at a time from a new store. */
  function expected(p) {
    const s = createStore({ limits: { ...limits } });
    s.applyMessage(rec.snapshot);
    for (let i = 0; i < p; i++) s.applyMessage({ type: 'events', events: [rec.event(i)] });
    return stateOf(s);
  }
  // Forwards, backwards, across keyframes and within one, to the ends.
  const targets = [rec.length, 0, 40, 39, 41, 90, 17, 34, 35, rec.length - 1, 5, rec.length, 60, 61, 62];
  for (const p of targets) {
    player.seek(p);
    assert.equal(player.state.value.position, p);
    assert.deepEqual(stateOf(store), expected(p), `after a seek to ${p}`);
  }
  // Stepping on from there applies the events one by one, as live.
  player.seek(50);
  for (let k = 0; k < 5; k++) player.stepEvent();
  assert.deepEqual(stateOf(store), expected(55));
  player.stepCycle();
  const p = player.state.value.position;
  assert.ok(['cycleEnd', 'bindingEnd'].includes(rec.kind[p - 1]));
  assert.deepEqual(stateOf(store), expected(p));
});

test('playback follows the recorded gaps times the speed, an idle gap capped at 2 s; it stops at the end', async () => {
  const { snap, events } = session(10, { reset: false });
  const rec = parseRecording(recordingText({ snap, events }));
  let t = 0;
  const frames = [];
  const store = createStore();
  const player = createPlayer({
    rec, store, now: () => t, frame: (fn) => frames.push(fn), cancelFrame: () => {}, pause: async () => {},
  });
  await player.prepare();
  const tick = (ms) => {
    t += ms;
    const list = frames.splice(0);
    for (const fn of list) fn();
  };
  player.play();
  assert.equal(player.state.value.playing, true);
  const gap = rec.time[0] - rec.startTime;
  tick(gap - 1);
  assert.equal(player.state.value.position, 0);
  tick(1);
  assert.ok(player.state.value.position >= 1);
  // The idle minute takes 2 s at 1×, 1 s at 4× (a quarter of a minute, capped).
  const idle = rec.time.findIndex((x, i) => i > 0 && x - rec.time[i - 1] > 50_000);
  player.seek(idle);
  tick(MAX_GAP_MS - 1);
  assert.equal(player.state.value.position, idle);
  tick(1);
  assert.equal(player.state.value.position, idle + 1);
  player.setSpeed(Infinity);
  tick(16);
  tick(16);
  assert.equal(player.state.value.position, rec.length);
  assert.equal(player.state.value.playing, false);
  player.pause();
  assert.equal(frames.length, 0);
});

test('the player\'s API answers from the recording up to where it is, and refuses everything else without a request', async () => {
  const { snap, events } = session(4, { reset: false });
  const rec = parseRecording(recordingText({ snap, events }));
  const store = createStore();
  const player = createPlayer({ rec, store, pause: async () => {} });
  await player.prepare();
  const end = events.findIndex((e) => e.kind === 'cycleEnd' && e.cycle === 2);
  player.seek(end);
  const r = await player.api.cycle(2);
  assert.equal(r.id, 2);
  assert.ok(!r.end, 'the cycle had not ended there');
  assert.ok(r.events.some((e) => e.kind === 'filter'));
  player.seek(rec.length);
  assert.equal((await player.api.cycle(2)).end.result, 'scheduled');
  assert.deepEqual((await player.api.cycles('default/p-3')).items.map((c) => c.id), [5, 4]);
  assert.deepEqual(podCycleSummaries(rec, 'default/p-3', end), []);
  assert.equal(cycleRecord(rec, 99, rec.length), null);
  await assert.rejects(player.api.cycle(99), (err) => err instanceof ApiError && err.status === 404);
  for (const call of [() => player.api.pause(), () => player.api.reset(), () => player.api.createPod({}), () => player.api.deleteNode('n1'), () => player.api.anythingNew()]) {
    await assert.rejects(call(), (err) => err instanceof ApiError && /replays a recording/.test(err.message));
  }
});

test('keys in a replay drive the player: Space, S, C, B; R resets nothing', () => {
  const views = ['queue', 'cycle', 'cluster', 'timeline', 'controls'];
  const key = (k) => shortcut({ key: k }, views, true);
  assert.deepEqual(key(' '), { action: 'player', arg: 'toggle' });
  assert.deepEqual(key('s'), { action: 'player', arg: 'stepEvent' });
  assert.deepEqual(key('C'), { action: 'player', arg: 'stepCycle' });
  assert.deepEqual(key('b'), { action: 'player', arg: 'stepBack' });
  assert.equal(key('r'), null);
  assert.deepEqual(key('2'), { action: 'setView', arg: 'cycle' });
  assert.deepEqual(shortcut({ key: 's' }, views), { action: 'step' }, 'live keys are as they were');
});

test('a lesson step\'s position: before the run\'s first event of a later step (issue 37, 1)', () => {
  resetSeq(0);
  const events = [
    E.scenario({ id: 'run-1', name: 'l', step: 1, steps: 3, phase: 'running' }),
    E.node('added', nodeSummary('n1')),
    E.scenario({ id: 'run-2', name: 'other', step: 5, steps: 9, phase: 'running' }),
    E.scenario({ id: 'run-1', name: 'l', step: 2, steps: 3, phase: 'waiting' }),
    E.node('added', nodeSummary('n2')),
  ];
  const rec = parseRecording(recordingText({ snap: snapshot({ at: 0 }), events }));
  assert.equal(stepPosition(rec, 'run-1', 1), 3, 'after n1, before step 2 waits; another run\'s steps do not count');
  assert.equal(stepPosition(rec, 'run-1', 2), rec.length, 'the last step told: the end');
});
