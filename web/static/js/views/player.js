// The replay's own parts of the page: the banner that says the page shows a
// recording (on every view, for as long as it does), the player bar (play,
// pause, step one event or one cycle, seek, speed), the Recording view in
// place of Controls (whose forms would change a cluster), and the file
// picker that opens a recording. Handlers call the player or onOpen.

import { html } from '../ui.js';
import { formatClockMs, formatDuration, plural } from '../format.js';
import { describeEvent, seqAt, SPEEDS, speedLabel } from '../replay/recording.js';

/** Why the page changes nothing, for the titles of what it hides or disables. */
export const READ_ONLY = 'This page replays a recording: nothing here changes a cluster.';

function created(header) {
  const t = Date.parse(header?.created);
  return Number.isNaN(t) ? 'at an unknown time' : new Date(t).toLocaleString();
}

/** A file picker for a recording; onOpen(file). */
export function OpenRecording({ onOpen, id = 'open-recording', label = 'Open recording…', className = 'small' }) {
  const pick = (ev) => {
    const file = ev.currentTarget.files?.[0];
    ev.currentTarget.value = '';
    if (file) onOpen(file);
  };
  return html`<span class="open-recording">
    <input type="file" id=${id} class="sr-only" accept=".gz,application/gzip" onChange=${pick} />
    <label for=${id} class=${`button ${className}`} title="a .recording.gz file (GET /api/v1/recording, scenario run --record); or drop one on the page">${label}</label>
  </span>`;
}

/** Under the header on every view while a recording plays. */
export function ReplayBanner({ replay }) {
  const h = replay.header || {};
  return html`<section class="replay-banner" id="replay-banner" aria-label="recording">
    <strong class="replay-label">Recording</strong>
    <span id="replay-name" class="replay-name">${replay.name}</span>
    ${replay.header ? html`<span class="muted">made ${created(h)}${h.pod ? `, only pod ${h.pod} and what is about no pod` : ''}</span>` : null}
    <span class="replay-ro">${READ_ONLY}</span>
    ${replay.server
      ? html`<span class="muted" id="back-to-live" title="minisched replay serves one file and no cluster">No live cluster here: run minisched and open its address.</span>`
      : html`<a href="/" id="back-to-live" class="button small">Back to live</a>`}
  </section>`;
}

/** Play, pause, step, seek and speed. */
export function PlayerBar({ player }) {
  const s = player.state.value;
  const rec = player.recording;
  const last = s.position - 1;
  const what = describeEvent(rec, last);
  if (!s.ready) {
    return html`<section class="player" id="player" data-ready="false" aria-label="player">
      <span role="status">Preparing the recording: ${s.prepared} of ${s.keyframes} keyframes…</span>
    </section>`;
  }
  return html`<section class="player" id="player" data-ready="true" data-position=${s.position} data-playing=${s.playing ? 'true' : 'false'} aria-label="player">
    <button type="button" id="player-play" class="primary" onClick=${player.toggle} title="Space: play or pause">${s.playing ? 'Pause' : 'Play'}</button>
    <button type="button" id="player-step" onClick=${player.stepEvent} disabled=${s.position >= rec.length} title="S: apply the next event">Step event</button>
    <button type="button" id="player-cycle" onClick=${player.stepCycle} disabled=${s.position >= rec.length} title="C: to the end of the next scheduling cycle (cycleEnd) or binding (bindingEnd)">Step cycle</button>
    <input type="range" id="player-seek" min="0" max=${rec.length} step="1" value=${s.position} aria-label="position in the recording (events applied)"
      aria-valuetext=${`event ${s.position} of ${rec.length}`} onInput=${(ev) => player.seek(ev.currentTarget.valueAsNumber)} />
    <span class="player-at" id="player-position" aria-live="off">
      event <strong>${s.position}</strong> of ${rec.length} · seq ${seqAt(rec, s.position)} · ${formatClockMs(s.time)}
      ${what ? html` · <span class="muted">${what}</span>` : html` · <span class="muted">the recording's start</span>`}
    </span>
    <label class="player-speed"><span class="sr-only">speed</span>
      <select id="player-speed" value=${String(s.speed)} onChange=${(ev) => player.setSpeed(ev.currentTarget.value)}>
        ${SPEEDS.map((v) => html`<option key=${v} value=${String(v)}>${speedLabel(v)}</option>`)}
      </select>
    </label>
  </section>`;
}

/** The Controls tab's place in a replay: what the recording is, and why there are no controls. */
export function RecordingView({ store, player, onOpen }) {
  const replay = store.page.replay.value;
  const rec = player?.recording;
  const h = replay?.header || {};
  const span = rec && rec.length ? rec.time[rec.length - 1] - rec.startTime : 0;
  return html`<div class="recording-view">
    <section class="panel" aria-labelledby="recording-h" id="recording-info">
      <h2 id="recording-h">Recording ${replay?.name || ''}</h2>
      <dl class="facts">
        <div><dt>made</dt><dd>${created(h)}</dd></div>
        <div><dt>format</dt><dd>${h.format || '?'} (stream schema ${h.schema || '?'})</dd></div>
        ${rec ? html`<div><dt>events</dt><dd>${plural(rec.length, 'event')}, seq ${seqAt(rec, 0)} to ${seqAt(rec, rec.length)}, over ${formatDuration(span)}</dd></div>` : null}
        ${h.pod ? html`<div><dt>pod</dt><dd>${h.pod} (and the events about no pod)</dd></div>` : null}
        ${h.since > (rec?.snapshot.seq ?? 0) ? html`<div><dt>starts at</dt><dd>seq ${h.since}: the events before it bring the state there</dd></div>` : null}
      </dl>
      <p id="recording-no-controls">The controls (forms, lessons, plugins, the configuration editor, reset) are not here: they change a live cluster, and this page replays a recording, which changes nothing. Play it with the bar above, or open another recording.</p>
      <${OpenRecording} onOpen=${onOpen} id="open-recording-view" label="Open another recording…" className="" />
    </section>
  </div>`;
}

/** While a recording opens, or why it did not. */
export function ReplayOpening({ opening, onOpen, onDismiss }) {
  if (!opening) return null;
  if (opening.state === 'loading') {
    return html`<div class="replay-opening" role="status" id="replay-opening">Opening the recording ${opening.name}…</div>`;
  }
  return html`<div class="replay-opening replay-error" role="alert" id="replay-error">
    <strong>Could not open ${opening.name || 'the recording'}:</strong> <span class="replay-error-text">${opening.message}</span>
    <span class="replay-error-actions">
      <${OpenRecording} onOpen=${onOpen} id="open-recording-error" label="Open another file…" />
      ${onDismiss ? html`<button type="button" class="small" onClick=${onDismiss}>Dismiss</button>` : html`<a class="button small" href="/">Back to live</a>`}
    </span>
  </div>`;
}
