// The member directory: search, a user's sessions (revoke one or all),
// delete a user.
import { h, clear, alertBox, say, field, debounce } from './dom.js';
import { api, get, qs, seg } from './api.js';

function escapeRegex(text) { return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'); }

export function mount(main) {
  let stopped = false;
  let selected = null;
  const search = h('input', { id: 'user-search', type: 'search', autocomplete: 'off', placeholder: 'username or id' });
  const error = alertBox('error', { id: 'users-error' });
  const status = alertBox('ok', { id: 'users-status' });
  const body = h('tbody');
  const count = h('p', { class: 'muted', 'aria-live': 'polite', id: 'users-count' });
  const detail = h('section', { class: 'panel hidden', id: 'user-detail', 'aria-labelledby': 'user-title' });
  main.append(h('h1', {}, 'Users'), h('div', { class: 'toolbar' }, field('Search users', search, 'grow')), error, status, count,
    h('div', { class: 'split' },
      h('div', { class: 'table-wrap' }, h('table', { id: 'users-table' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Username'), h('th', { scope: 'col' }, 'Id'), h('th', { scope: 'col' }, 'Created'))),
        body)),
      detail));

  // An empty table says what the page shows and how to begin, not just "nothing".
  function emptyText(text) {
    return text
      ? `No user's username or id matches "${text}". Try part of a username, or an exact id.`
      : 'No users yet. This page lists the app\'s members (they sign up through the API: POST /users); ' +
        'search by username or id, then open one to see and revoke their sessions.';
  }

  async function load() {
    const text = search.value.trim();
    const query = text ? JSON.stringify({ $or: [{ username: { $regex: escapeRegex(text), $options: 'i' } }, { _id: text }] }) : '';
    try {
      const r = await api('GET', '/users' + qs({ query, limit: 50, sort: JSON.stringify({ username: 1 }), count: 'true' }));
      if (stopped) return;
      say(error, '');
      count.textContent = `${r.headers.get('X-Total-Count')} user(s)` + (r.data.length < Number(r.headers.get('X-Total-Count')) ? ', first 50 shown' : '');
      clear(body, r.data.length ? r.data.map((u) => h('tr', { 'data-user': u._id },
        h('td', {}, h('button', { type: 'button', class: 'link', onclick: () => select(u) }, u.username || '(no username)')),
        h('td', { class: 'mono' }, u._id), h('td', {}, u._createdAt || ''))) : h('tr', { class: 'empty' }, h('td', { colspan: 3, class: 'muted', id: 'users-empty' }, emptyText(text))));
    } catch (e) {
      if (!stopped) say(error, 'Cannot search the users: ' + e.message);
    }
  }

  async function select(user) {
    selected = user;
    detail.classList.remove('hidden');
    const sessions = h('tbody');
    const revokeAll = h('button', { type: 'button', id: 'revoke-all' }, 'Revoke all sessions');
    const deleteUser = h('button', { type: 'button', class: 'danger', id: 'delete-user' }, 'Delete user');
    clear(detail, h('h2', { id: 'user-title' }, user.username || user._id), h('p', { class: 'mono muted' }, user._id),
      h('h3', {}, 'Sessions'),
      h('div', { class: 'table-wrap' }, h('table', { id: 'sessions-table' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Session'), h('th', { scope: 'col' }, 'Last used'),
          h('th', { scope: 'col' }, 'Expires'), h('th', { scope: 'col' }, h('span', { class: 'hidden' }, 'Actions')))),
        sessions)),
      h('div', { class: 'actions' }, revokeAll, deleteUser));
    const path = '/admin/users/' + seg(user._id) + '/sessions';
    async function refresh() {
      try {
        const list = await get(path);
        if (stopped || selected !== user) return;
        clear(sessions, list.length ? list.map((s) => h('tr', { 'data-session': s.id },
          h('td', { class: 'mono' }, s.id + '…'), h('td', {}, s.lastSeen), h('td', {}, s.expiresAt),
          h('td', {}, h('button', { type: 'button', 'aria-label': 'Revoke session ' + s.id, onclick: async () => {
            try { await api('DELETE', path + '/' + seg(s.id)); say(status, 'Session revoked.', 'ok'); refresh(); } catch (e) { say(error, e.message); }
          } }, 'Revoke')))) : h('tr', {}, h('td', { colspan: 4, class: 'muted' }, 'No live sessions.')));
      } catch (e) { say(error, 'Cannot list the sessions: ' + e.message); }
    }
    revokeAll.addEventListener('click', async () => {
      try { const r = await api('DELETE', path); say(status, `Revoked ${r.data.count} session(s).`, 'ok'); refresh(); } catch (e) { say(error, e.message); }
    });
    deleteUser.addEventListener('click', async () => {
      if (deleteUser.textContent === 'Delete user') { deleteUser.textContent = 'Confirm: delete ' + (user.username || user._id); return; }
      try {
        await api('DELETE', '/users/' + seg(user._id));
        say(status, 'Deleted ' + (user.username || user._id) + '.', 'ok');
        detail.classList.add('hidden');
        selected = null;
        load();
      } catch (e) { say(error, 'Cannot delete the user: ' + e.message); }
    });
    refresh();
  }

  search.addEventListener('input', debounce(load, 250));
  load();
  return () => { stopped = true; };
}
