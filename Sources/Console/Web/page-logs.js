// This daemon's recent log entries, live (polled once a second), filtered
// by level and request id on the server. The console's own polling (its
// answered GET /admin/stats and /admin/logs) is left out by the server
// unless "Show console polling" is on.
import { h, clear, alertBox, say, field } from './dom.js';
import { get, qs } from './api.js';

const LEVELS = ['trace', 'debug', 'info', 'notice', 'warning', 'error', 'critical'];
const KEEP = 500;

export function mount(main) {
  let stopped = false;
  let timer = null;
  let last = 0;
  let serial = 0;
  const level = h('select', { id: 'log-level' }, LEVELS.map((l) => h('option', { value: l, selected: l === 'trace' }, l + (l === 'trace' ? ' (all)' : ' and above'))));
  const requestID = h('input', { id: 'log-request-id', type: 'text', autocomplete: 'off', class: 'mono', placeholder: 'X-Request-Id' });
  const live = h('input', { id: 'log-live', type: 'checkbox', checked: true });
  const polling = h('input', { id: 'log-polling', type: 'checkbox' });
  const error = alertBox('error');
  const body = h('tbody', { id: 'log-body' });
  main.append(h('h1', {}, 'Logs'),
    h('div', { class: 'toolbar' }, field('Level', level), field('Request id', requestID, 'grow'),
      h('div', { class: 'field' }, h('label', { for: 'log-live' }, 'Live'), live),
      h('div', { class: 'field' }, h('label', { for: 'log-polling', title: 'The console\u2019s own GET /admin/stats and /admin/logs' }, 'Show console polling'), polling)),
    error,
    h('div', { class: 'table-wrap logs' }, h('table', { id: 'log-table' },
      h('thead', {}, h('tr', {}, ['Time', 'Level', 'Request id', 'Message'].map((t) => h('th', { scope: 'col' }, t)))), body)));

  function row(e) {
    const fields = Object.entries(e.fields || {}).map(([k, v]) => ` ${k}=${v}`).join('');
    return h('tr', { 'data-seq': e.seq, 'data-level': e.level },
      h('td', {}, e.time.slice(11, 23)), h('td', { class: 'level-' + e.level }, e.level),
      h('td', {}, e.requestId || ''), h('td', {}, `${e.label}: ${e.message}${fields}`));
  }

  // Nothing at all differs from nothing that matches the filters.
  function emptyText() {
    const id = requestID.value.trim();
    if (id) return `No entry of request ${id}` + (level.value === 'trace' ? '' : ` at ${level.value} or above`) + ' among the recent ones. Request ids are in each response\u2019s X-Request-Id header.';
    if (level.value !== 'trace') return `No entries at ${level.value} or above yet. Choose a lower level to see more.`;
    return 'No log entries yet. This page shows roostd\u2019s recent log and access entries as they happen (the console\u2019s own polling is hidden).';
  }

  async function poll() {
    const mine = serial;
    try {
      const data = await get('/admin/logs' + qs({ after: last, level: level.value, request_id: requestID.value.trim(),
        polling: polling.checked ? 'true' : '', limit: KEEP }));
      if (stopped || mine !== serial) return;
      say(error, '');
      last = data.last;
      if (data.entries.length) {
        body.prepend(...data.entries.reverse().map(row));
        while (body.children.length > KEEP) body.lastChild.remove();
      }
      if (!body.children.length) clear(body, h('tr', { class: 'empty' }, h('td', { colspan: 4, class: 'muted', id: 'log-empty' }, emptyText())));
      else body.querySelectorAll('tr.empty').forEach((r) => r.remove());
    } catch (e) {
      if (!stopped) say(error, 'Cannot read the logs: ' + e.message);
    }
    if (!stopped && mine === serial && live.checked) timer = setTimeout(poll, 1000);
  }

  function restart() {
    serial++;
    clearTimeout(timer);
    last = 0;
    clear(body);
    poll();
  }
  level.addEventListener('change', restart);
  polling.addEventListener('change', restart);
  let typing = null;
  requestID.addEventListener('input', () => { clearTimeout(typing); typing = setTimeout(restart, 300); });
  live.addEventListener('change', () => { if (live.checked) { serial++; clearTimeout(timer); poll(); } else clearTimeout(timer); });

  poll();
  return () => { stopped = true; serial++; clearTimeout(timer); clearTimeout(typing); };
}
