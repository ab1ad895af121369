// The lesson banner: under the tabs on every view while a scenario runs and
// after it ends (until closed): its state, the step it is at and what that
// step does, with the steps told so far to go back and forth through, and
// the step's note (what to look at while it runs) under it.

import { useState } from 'preact/hooks';
import { html } from '../ui.js';
import { formatClock } from '../format.js';

export default function LessonBanner({ store, actions }) {
  // A comparison's runs are its own business: a lesson whose expectations
  // fail under the other configuration is no failed lesson.
  const run = store.server.lessonRun();
  // null follows the newest step.
  const [at, setAt] = useState(null);
  if (!run || store.page.lessonClosed.value === run.id) return null;
  const log = run.log || [];
  const i = at == null || at >= log.length ? log.length - 1 : at;
  const entry = log[i];
  const state = run.state || 'running';
  // A paced run waits before a step: Next at the newest entry takes it.
  const waiting = state === 'running' && (run.phase === 'waiting' || (run.phase === undefined && run.waiting)) && !store.page.replay.value;
  const newest = i >= log.length - 1;
  return html`<section class=${`lesson s-${state}`} id="lesson" aria-label="lesson" aria-live="polite">
    <strong class="lesson-name" title=${run.name || ''}>${run.title || run.name || run.id}</strong>
    <span class=${`badge s-${waiting ? 'waiting' : state}`}>${waiting ? 'waiting for Next' : state}</span>
    ${run.steps ? html`<span class="lesson-step">${(entry?.step ?? run.step) ? `step ${entry?.step ?? run.step} of ${run.steps}` : `before step 1 of ${run.steps}`}</span>` : null}
    <span class="lesson-what">${entry ? html`${entry.message} <span class="muted small">${formatClock(entry.t)}</span>` : run.message || ''}</span>
    ${entry?.note ? html`<p class="lesson-note" id="lesson-note"><span class="lesson-note-label">Look:</span> ${entry.note}</p>` : null}
    <span class="lesson-nav">
      <button type="button" class="small" id="lesson-prev" disabled=${i <= 0} onClick=${() => setAt(i - 1)}>Previous</button>
      ${!newest && actions.showStep && !store.page.replay.value && entry?.step
        ? html`<button type="button" class="small" id="lesson-then" title="replay the server's history up to the end of this step: the board, the inspector and the timeline as they were"
            onClick=${() => actions.showStep(run.id, entry.step)}>Show the cluster then</button>` : null}
      <button type="button" class=${`small${waiting && newest ? ' primary' : ''}`} id="lesson-next" disabled=${newest && !waiting}
        title=${waiting && newest ? `run step ${run.step}` : 'the next step told'}
        onClick=${() => (newest ? actions.nextStep(run.id) : setAt(i + 1 >= log.length - 1 ? null : i + 1))}>Next</button>
      ${state === 'running' && !store.page.replay.value ? html`<button type="button" class="small" onClick=${() => actions.cancelScenario(run.id)}>Cancel</button>` : null}
      <button type="button" class="small" aria-label="close the lesson banner" onClick=${() => actions.closeLesson(run.id)}>✕</button>
    </span>
  </section>`;
}
