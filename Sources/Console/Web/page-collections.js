// Every collection with its size, access level, access rules and indexes.
import { h, alertBox, say, fmt } from './dom.js';
import { get, seg } from './api.js';

export function mount(main) {
  const error = alertBox('error');
  const body = h('tbody', {}, h('tr', {}, h('td', { colspan: 5, class: 'muted' }, 'Loading…')));
  main.append(h('h1', {}, 'Collections'), error,
    h('div', { class: 'table-wrap' }, h('table', { id: 'collections' },
      h('caption', { class: 'hidden' }, 'Collections'),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Collection'), h('th', { scope: 'col' }, 'Documents'),
        h('th', { scope: 'col' }, 'Permission'), h('th', { scope: 'col' }, 'Rules'), h('th', { scope: 'col' }, 'Indexes'))),
      body)));
  let stopped = false;
  get('/admin/collections').then((list) => {
    if (stopped) return;
    body.replaceChildren(...(list.length ? list.map((c) => h('tr', { 'data-collection': c.name },
      h('td', {}, h('a', { href: '#/records/' + seg(c.name) }, c.name)),
      h('td', {}, fmt.number(c.count)),
      h('td', {}, c.permission),
      h('td', {}, c.rules ? h('dl', { class: 'rules' }, Object.entries(c.rules).flatMap(([op, rule]) =>
        [h('dt', {}, op), h('dd', {}, h('code', {}, JSON.stringify(rule)))])) : h('span', { class: 'muted' }, 'the permission\'s')),
      h('td', {}, c.indexes.length ? c.indexes.map((i) => h('code', {}, i)).flatMap((x, n) => (n ? [', ', x] : [x])) : h('span', { class: 'muted' }, 'none'))))
      : [h('tr', {}, h('td', { colspan: 5, class: 'muted' }, 'No collections yet.'))]));
  }).catch((e) => { if (!stopped) say(error, 'Cannot list the collections: ' + e.message); });
  return () => { stopped = true; };
}
