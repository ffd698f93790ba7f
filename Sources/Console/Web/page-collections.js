// Every collection with its size, access level, access rules, indexes and
// who manages its settings; #/collections/new and #/collections/edit/<name>
// open the collection editor (collection-editor.js).
import { h, alertBox, say, fmt } from './dom.js';
import { get, seg } from './api.js';
import { mountEditor } from './collection-editor.js';

const MANAGERS = { config: 'config file', runtime: 'run time', none: '—' };

export function mount(main, params) {
  if (params[0] === 'new') return mountEditor(main, null);
  if (params[0] === 'edit' && params[1]) return mountEditor(main, params[1]);
  const error = alertBox('error');
  const body = h('tbody', {}, h('tr', {}, h('td', { colspan: 7, class: 'muted' }, 'Loading…')));
  main.append(h('div', { class: 'title-row' }, h('h1', {}, 'Collections'),
    h('a', { class: 'button primary', href: '#/collections/new', id: 'new-collection' }, 'New collection')), error,
    h('div', { class: 'table-wrap' }, h('table', { id: 'collections' },
      h('caption', { class: 'hidden' }, 'Collections'),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Collection'), h('th', { scope: 'col' }, 'Documents'),
        h('th', { scope: 'col' }, 'Permission'), h('th', { scope: 'col' }, 'Rules'), h('th', { scope: 'col' }, 'Indexes'),
        h('th', { scope: 'col' }, 'Schema'), h('th', { scope: 'col' }, 'Settings from'))),
      body)));
  let stopped = false;
  get('/admin/collections').then((list) => {
    if (stopped) return;
    body.replaceChildren(...(list.length ? list.map((c) => h('tr', { 'data-collection': c.name, 'data-managed-by': c.managedBy || 'none' },
      h('td', {}, h('a', { href: '#/collections/edit/' + seg(c.name), 'data-edit': c.name }, c.name), ' ',
        h('a', { href: '#/records/' + seg(c.name), class: 'small', 'data-records': c.name }, 'records')),
      h('td', {}, fmt.number(c.count)),
      h('td', {}, c.permission),
      h('td', {}, c.rules ? h('dl', { class: 'rules' }, Object.entries(c.rules).flatMap(([op, rule]) =>
        [h('dt', {}, op), h('dd', {}, h('code', {}, JSON.stringify(rule)))])) : h('span', { class: 'muted' }, 'the permission\'s')),
      h('td', {}, c.indexes.length ? c.indexes.map((i) => h('code', {}, i)).flatMap((x, n) => (n ? [', ', x] : [x])) : h('span', { class: 'muted' }, 'none')),
      h('td', {}, c.schema ? 'yes' : h('span', { class: 'muted' }, 'none')),
      h('td', {}, MANAGERS[c.managedBy] || c.managedBy || '—')))
      : [h('tr', {}, h('td', { colspan: 7, class: 'muted' }, 'No collections yet: New collection sets one up, or write a first record.'))]));
  }).catch((e) => { if (!stopped) say(error, 'Cannot list the collections: ' + e.message); });
  return () => { stopped = true; };
}
