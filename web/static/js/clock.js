// clock.js: the time for views that show one (a backoff's countdown, "12 s
// ago", the timeline's right edge). A view that calls clock(ms) renders again
// every ms milliseconds, for as long as it calls it: nothing ticks when no
// view on the page shows a clock. A replay's clock is the recording's.

import { signal } from './signals.js';

const tickers = new Map();

function ticker(ms) {
  let tick = tickers.get(ms);
  if (!tick) {
    let timer = 0;
    tick = signal(0, {
      // Runs while something reads the ticker.
      watched() {
        timer = setInterval(() => { tick.value += 1; }, ms);
      },
      unwatched() {
        clearInterval(timer);
      },
    });
    tickers.set(ms, tick);
  }
  return tick;
}

/**
 * In a replay, the recorded time the page shows (the player's position),
 * which stands still while the player does; null when live.
 */
export const replayNow = signal(null);

/** Now, in milliseconds; the calling view renders again every ms (in a replay, when the player moves). */
export function clock(ms) {
  const recorded = replayNow.value;
  if (recorded != null) return recorded;
  void ticker(ms).value;
  return Date.now();
}
