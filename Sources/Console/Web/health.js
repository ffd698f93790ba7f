// Whether roostd answers. A request that cannot reach it (connection refused,
// reset) or one that takes long and is followed by a failed probe marks it
// down: the app shows a banner and probes GET /healthz again with back-off
// (1, 2, 4 … 30 s) until any answer comes, from a probe or a page's request.

const FIRST_DELAY = 1000;
const MAX_DELAY = 30000;
const PROBE_TIMEOUT = 3000;

const listeners = new Set();
let down = false;
let probing = false;
let delay = FIRST_DELAY;
let retryAt = 0;
let timer = null;

/** `fn({ down, retryAt, probing })` runs on every change. */
export function onHealth(fn) { listeners.add(fn); return () => listeners.delete(fn); }

function notify() { for (const fn of listeners) fn({ down, retryAt, probing }); }

/** roostd answered (any HTTP status). */
export function answered() {
  if (!down) return;
  down = false;
  delay = FIRST_DELAY;
  clearTimeout(timer);
  notify();
}

/** A request could not reach roostd. */
export function unreachable() {
  if (down) return;
  down = true;
  delay = FIRST_DELAY;
  schedule();
}

/** A request is taking long: find out whether roostd answers at all. */
export function suspect() { if (!down && !probing) probe(); }

export function isDown() { return down; }

function schedule() {
  clearTimeout(timer);
  retryAt = Date.now() + delay;
  notify();
  timer = setTimeout(probe, delay);
}

async function probe() {
  probing = true;
  if (down) notify();
  let ok = false;
  try {
    await fetch('/healthz', { cache: 'no-store', credentials: 'omit', signal: AbortSignal.timeout(PROBE_TIMEOUT) });
    ok = true;
  } catch { /* refused, reset or no answer in time */ }
  probing = false;
  if (ok) { answered(); return; }
  if (!down) { unreachable(); return; }
  delay = Math.min(delay * 2, MAX_DELAY);
  schedule();
}
