// The member directory: search, create a user (POST /admin/users), and a
// user's page (user-detail.js): profile fields, a new password, roles,
// sessions, delete.
import { h, clear, alertBox, say, field, debounce } from './dom.js';
import { api, qs } from './api.js';
import { showUser } from './user-detail.js';

function escapeRegex(text) { return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'); }

/** A profile typed as JSON: an object, or an error saying what is wrong. */
export function parseProfile(text) {
  if (!text.trim()) return { value: {} };
  try {
    const value = JSON.parse(text);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return { error: 'The profile must be a JSON object, such as {"displayName": "Ada"}.' };
    return { value };
  } catch (e) {
    return { error: 'Not JSON: ' + e.message };
  }
}

export function mount(main) {
  const page = { stopped: false, selected: null };
  const search = h('input', { id: 'user-search', type: 'search', autocomplete: 'off', placeholder: 'username or id' });
  const newUser = h('button', { type: 'button', class: 'primary', id: 'new-user' }, 'New user');
  const error = alertBox('error', { id: 'users-error' });
  const status = alertBox('ok', { id: 'users-status' });
  const body = h('tbody');
  const count = h('p', { class: 'muted', 'aria-live': 'polite', id: 'users-count' });
  const detail = h('section', { class: 'panel hidden', id: 'user-detail', 'aria-labelledby': 'user-title' });
  const split = h('div', { class: 'split', id: 'users-split' },
    h('div', { class: 'table-wrap' }, h('table', { id: 'users-table' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Username'), h('th', { scope: 'col' }, 'Id'), h('th', { scope: 'col' }, 'Created'))),
      body)),
    detail);
  main.append(h('h1', {}, 'Users'), h('div', { class: 'toolbar' }, field('Search users', search, 'grow'), newUser), error, status, count, split);

  // An empty table says what the page shows and how to begin, not just "nothing".
  function emptyText(text) {
    return text
      ? `No user's username or id matches "${text}". Try part of a username, or an exact id.`
      : 'No users yet. This page lists the app\'s members (they sign up through the API: POST /users); ' +
        'create one with "New user", or search by username or id, then open one to edit it.';
  }

  function open() { detail.classList.remove('hidden'); split.classList.add('editing'); }
  function close() { detail.classList.add('hidden'); split.classList.remove('editing'); page.selected = null; }

  async function load() {
    const text = search.value.trim();
    const query = text ? JSON.stringify({ $or: [{ username: { $regex: escapeRegex(text), $options: 'i' } }, { _id: text }] }) : '';
    try {
      const r = await api('GET', '/users' + qs({ query, limit: 50, sort: JSON.stringify({ username: 1 }), count: 'true' }));
      if (page.stopped) return;
      say(error, '');
      count.textContent = `${r.headers.get('X-Total-Count')} user(s)` + (r.data.length < Number(r.headers.get('X-Total-Count')) ? ', first 50 shown' : '');
      clear(body, r.data.length ? r.data.map((u) => h('tr', { 'data-user': u._id },
        h('td', {}, h('button', { type: 'button', class: 'link', onclick: () => select(u._id) }, u.username || u.email || '(no username)')),
        h('td', { class: 'mono' }, u._id), h('td', {}, u._createdAt || ''))) : h('tr', { class: 'empty' }, h('td', { colspan: 3, class: 'muted', id: 'users-empty' }, emptyText(text))));
    } catch (e) {
      if (!page.stopped) say(error, 'Cannot search the users: ' + e.message);
    }
  }

  function select(id) {
    page.selected = id;
    open();
    showUser(detail, id, { page, error, status, reload: load, closed: close });
  }

  function createForm() {
    page.selected = null;
    open();
    const username = h('input', { id: 'create-username', type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: 'ada' });
    const email = h('input', { id: 'create-email', type: 'email', autocomplete: 'off', placeholder: 'ada@example.org' });
    const password = h('input', { id: 'create-password', type: 'password', autocomplete: 'new-password', required: true, minlength: 8 });
    const profile = h('textarea', { id: 'create-profile', class: 'json', rows: 6, spellcheck: 'false', placeholder: '{"displayName": "Ada"}' });
    const problem = alertBox('error', { id: 'create-error' });
    const submit = h('button', { type: 'submit', class: 'primary', id: 'create-user' }, 'Create user');
    const cancel = h('button', { type: 'button', id: 'cancel-create' }, 'Cancel');
    const form = h('form', { id: 'create-form', 'aria-labelledby': 'user-title' },
      h('h2', { id: 'user-title' }, 'New user'),
      h('p', { class: 'muted' }, 'A username, an email or both, and a password of 8 characters or more. '
        + 'The account can sign in at once: an address given here counts as verified, and no mail is sent.'),
      field('Username', username), field('Email', email), field('Password', password),
      field('Profile fields (JSON, optional)', profile), problem,
      h('div', { class: 'actions' }, submit, cancel));
    cancel.addEventListener('click', close);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const parsed = parseProfile(profile.value);
      if (parsed.error) { say(problem, parsed.error); profile.focus(); return; }
      const json = { ...parsed.value, password: password.value };
      if (username.value.trim()) json.username = username.value.trim();
      if (email.value.trim()) json.email = email.value.trim();
      submit.disabled = true;
      say(problem, '');
      try {
        const { data } = await api('POST', '/admin/users', { json });
        say(status, 'Created ' + (data.username || data.email || data._id) + '.', 'ok');
        await load();
        select(data._id);
      } catch (e) {
        say(problem, 'Cannot create the user: ' + e.message);
      } finally { submit.disabled = false; }
    });
    clear(detail, form);
    (username.value ? password : username).focus();
  }

  newUser.addEventListener('click', createForm);
  search.addEventListener('input', debounce(load, 250));
  load();
  return () => { page.stopped = true; };
}
