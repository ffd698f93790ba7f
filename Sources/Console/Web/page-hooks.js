// The hook registry in run order, then the Lua scripts' handlers with their counts.
import { h, alertBox, say } from './dom.js';
import { get } from './api.js';

export function mount(main) {
  let stopped = false;
  const error = alertBox('error');
  const body = h('tbody', {}, h('tr', {}, h('td', { colspan: 6, class: 'muted' }, 'Loading…')));
  const scripts = h('tbody', {}, h('tr', {}, h('td', { colspan: 7, class: 'muted' }, 'Loading…')));
  main.append(h('h1', {}, 'Hooks'), h('p', { class: 'muted' }, 'Every registered hook, in the order it runs: by priority, then registration.'),
    error, h('div', { class: 'table-wrap' }, h('table', { id: 'hooks-table' },
      h('thead', {}, h('tr', {}, ['#', 'Event', 'Collection', 'Hook', 'Priority', 'Budget'].map((t) => h('th', { scope: 'col' }, t)))),
      body)),
    h('h2', {}, 'Script handlers'),
    h('p', { class: 'muted' }, 'What the Lua scripts in scripts_dir register (SIGHUP reloads them), with calls, errors and time since the last load.'),
    h('div', { class: 'table-wrap' }, h('table', { id: 'script-hooks-table' },
      h('thead', {}, h('tr', {}, ['Kind', 'Event', 'Target', 'Where', 'Calls', 'Errors', 'Time'].map((t) => h('th', { scope: 'col' }, t)))),
      scripts)));
  get('/admin/hooks').then((all) => {
    if (stopped) return;
    const list = all.filter((x) => x.source !== 'script');
    const handlers = all.filter((x) => x.source === 'script');
    body.replaceChildren(...(list.length ? list.map((x, i) => h('tr', {},
      h('td', {}, i + 1), h('td', {}, x.event), h('td', {}, x.collection), h('td', { class: 'mono' }, x.id),
      h('td', {}, x.priority), h('td', {}, x.budgetMs == null ? 'none' : x.budgetMs + ' ms')))
      : [h('tr', { class: 'empty' }, h('td', { colspan: 6, class: 'muted', id: 'hooks-empty' },
        'No hooks registered. Hooks run code before or after a write (validate, change, refuse, react); '
        + 'they come from Swift code built into roostd or from Lua scripts in scripts_dir (docs/SCRIPTING.md).'))]));
    scripts.replaceChildren(...(handlers.length ? handlers.map((x) => h('tr', {},
      h('td', {}, x.kind), h('td', {}, x.event || x.method || ''), h('td', {}, x.collection || x.name || x.schedule || ''),
      h('td', { class: 'mono' }, x.location), h('td', {}, x.calls), h('td', {}, x.errors + (x.timeouts ? ' (' + x.timeouts + ' over budget)' : '')),
      h('td', {}, x.totalMs.toFixed(1) + ' ms')))
      : [h('tr', { class: 'empty' }, h('td', { colspan: 7, class: 'muted', id: 'script-hooks-empty' },
        'No scripts loaded. Put Lua files in the directory scripts_dir names and send roostd SIGHUP; '
        + 'their hooks, routes and jobs are listed here with their calls and errors (docs/SCRIPTING.md).'))]));
  }).catch((e) => {
    if (stopped) return;
    say(error, 'Cannot list the hooks: ' + e.message);
    // No "Loading…" left behind an error.
    for (const [tbody, span] of [[body, 6], [scripts, 7]]) tbody.replaceChildren(h('tr', {}, h('td', { colspan: span, class: 'muted' }, 'Not loaded.')));
  });
  return () => { stopped = true; };
}
