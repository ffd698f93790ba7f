// The console's page-hooks.js: the text between the #""" lines is the file, served as is.
extension ConsoleAssets {
    static let pageHooksJS = #"""
// The hook registry in run order.
import { h, alertBox, say } from './dom.js';
import { get } from './api.js';

export function mount(main) {
  let stopped = false;
  const error = alertBox('error');
  const body = h('tbody', {}, h('tr', {}, h('td', { colspan: 6, class: 'muted' }, 'Loading…')));
  main.append(h('h1', {}, 'Hooks'), h('p', { class: 'muted' }, 'Every registered hook, in the order it runs: by priority, then registration.'),
    error, h('div', { class: 'table-wrap' }, h('table', { id: 'hooks-table' },
      h('thead', {}, h('tr', {}, ['#', 'Event', 'Collection', 'Hook', 'Priority', 'Budget'].map((t) => h('th', { scope: 'col' }, t)))),
      body)));
  get('/admin/hooks').then((list) => {
    if (stopped) return;
    body.replaceChildren(...(list.length ? list.map((x, i) => h('tr', {},
      h('td', {}, i + 1), h('td', {}, x.event), h('td', {}, x.collection), h('td', { class: 'mono' }, x.id),
      h('td', {}, x.priority), h('td', {}, x.budgetMs + ' ms')))
      : [h('tr', {}, h('td', { colspan: 6, class: 'muted' }, 'No hooks registered.'))]));
  }).catch((e) => { if (!stopped) say(error, 'Cannot list the hooks: ' + e.message); });
  return () => { stopped = true; };
}
"""#
}
