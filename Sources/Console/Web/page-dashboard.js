// Live numbers of the daemon, one sample a second from GET /admin/stats.
import { h, alertBox, say, fmt } from './dom.js';
import { get } from './api.js';
import { LineChart } from './chart.js';

const METRICS = [
  ['requestsPerSecond', 'Requests / s', (v) => fmt.number(v)],
  ['p50Ms', 'Latency p50', fmt.ms],
  ['p99Ms', 'Latency p99', fmt.ms],
  ['serverErrorsPerSecond', 'Server errors (5xx) / s', (v) => fmt.number(v)],
  ['clientErrorsPerSecond', 'Client errors (4xx) / s', (v) => fmt.number(v)],
  ['readerQueue', 'Reader queue', (v) => fmt.number(v)],
  ['writerQueue', 'Writer queue', (v) => fmt.number(v)],
  ['hasherQueue', 'Password-hash queue', (v) => fmt.number(v)],
  ['uploadQueue', 'Upload queue', (v) => fmt.number(v)],
  ['commitsPerSecond', 'Group commits / s', (v) => fmt.number(v)],
  ['groupCommitBatch', 'Group-commit batch (writes per commit)', (v) => fmt.number(v)],
  ['rssBytes', 'Resident memory', fmt.bytes],
  ['liveStreams', 'Open live streams', (v) => fmt.number(v)],
  ['webhookBacklog', 'Webhook backlog', (v) => fmt.number(v)],
  ['thumbnailBacklog', 'Thumbnail backlog', (v) => fmt.number(v)],
];

export function mount(main) {
  const error = alertBox('error');
  const updated = h('p', { class: 'muted', id: 'stats-updated', 'aria-live': 'off' }, 'Waiting for the first sample…');
  const cards = METRICS.map(([key, label, format]) => {
    const value = h('p', { class: 'value', 'data-value': key }, '–');
    const chart = new LineChart(label + ', last minute');
    const card = h('section', { class: 'card', 'data-metric': key, 'aria-label': label }, h('h2', {}, label), value, chart.el);
    return { key, format, value, chart, card };
  });
  main.append(h('h1', {}, 'Dashboard'), updated, error, h('div', { class: 'cards' }, cards.map((c) => c.card)));

  let samples = [];
  let last = 0;
  let stopped = false;
  let timer = null;

  async function poll() {
    try {
      const data = await get('/admin/stats?after=' + last);
      if (stopped) return;
      say(error, '');
      if (data.samples.length) {
        samples = samples.concat(data.samples).slice(-120);
        last = samples[samples.length - 1].t;
        const newest = samples[samples.length - 1];
        for (const c of cards) {
          c.value.textContent = c.format(newest[c.key]);
          c.chart.update(samples.map((x) => x[c.key]));
        }
        updated.textContent = 'Updated ' + new Date(newest.t).toLocaleTimeString() + ' · one sample a second';
      }
    } catch (e) {
      if (!stopped) say(error, 'Cannot read the stats: ' + e.message);
    }
    if (!stopped) timer = setTimeout(poll, 1000);
  }
  poll();
  return () => { stopped = true; clearTimeout(timer); };
}
