// One user on the Users page: how they sign in (GET /admin/users/:id/account:
// email and its verification, password, two-factor with a reset by DELETE
// /users/:id/2fa, linked providers), profile fields (a JSON editor, saved as a
// merge patch by PATCH /users/:id), a new password (PUT
// /admin/users/:id/password: every session ends), roles (add, remove),
// sessions (revoke one or all) and delete.
import { h, clear, alertBox, say, field } from './dom.js';
import { api, get, seg } from './api.js';

// Shown above the editor, not in it: the server keeps these (username and
// emailVerified never change here; the email moves by the email-change flow).
const KEPT = ['username', 'email', 'emailVerified'];

function editable(record) {
  return Object.fromEntries(Object.entries(record).filter(([k]) => !k.startsWith('_') && !KEPT.includes(k)));
}

/** The merge patch turning `before` into `after`: changed keys, and null for removed ones. */
function mergePatch(before, after) {
  const patch = {};
  for (const k of Object.keys(before)) if (!(k in after)) patch[k] = null;
  for (const [k, v] of Object.entries(after)) if (JSON.stringify(before[k]) !== JSON.stringify(v)) patch[k] = v;
  return patch;
}

/**
 * Fills `panel` with user `id`. `ctx`: { page (stopped, selected), error, status (the page's alert boxes),
 * reload (the list), closed (called once the user is deleted) }.
 */
export async function showUser(panel, id, ctx) {
  const { page, error, status } = ctx;
  const current = () => !page.stopped && page.selected === id;
  clear(panel, h('h2', { id: 'user-title' }, id), h('p', { class: 'muted' }, 'Loading\u2026'));
  let record;
  try {
    record = await get('/users/' + seg(id));
  } catch (e) {
    if (current()) clear(panel, h('h2', { id: 'user-title' }, id), h('p', { class: 'alert error' }, 'Cannot read the user: ' + e.message));
    return;
  }
  if (!current()) return;
  const name = record.username || record.email || id;

  // Profile.
  const profile = h('textarea', { id: 'profile-json', class: 'json', rows: 8, spellcheck: 'false' });
  profile.value = JSON.stringify(editable(record), null, 2);
  const profileError = alertBox('error', { id: 'profile-error' });
  const saveProfile = h('button', { type: 'button', class: 'primary', id: 'save-profile' }, 'Save profile');
  saveProfile.addEventListener('click', async () => {
    let after;
    try { after = JSON.parse(profile.value || '{}'); } catch (e) { say(profileError, 'Not JSON: ' + e.message); return; }
    if (after === null || typeof after !== 'object' || Array.isArray(after)) { say(profileError, 'The profile must be a JSON object.'); return; }
    const patch = mergePatch(editable(record), after);
    if (!Object.keys(patch).length) { say(profileError, ''); say(status, 'Nothing changed.', 'ok'); return; }
    saveProfile.disabled = true;
    try {
      const { data } = await api('PATCH', '/users/' + seg(id), { json: patch, headers: { 'Content-Type': 'application/merge-patch+json' } });
      record = data && data._id ? data : await get('/users/' + seg(id));
      profile.value = JSON.stringify(editable(record), null, 2);
      say(profileError, '');
      say(status, 'Saved the profile of ' + name + '.', 'ok');
    } catch (e) {
      say(profileError, 'Cannot save the profile: ' + e.message);
    } finally { saveProfile.disabled = false; }
  });

  // Password.
  const password = h('input', { id: 'new-password', type: 'password', autocomplete: 'new-password', minlength: 8 });
  const passwordError = alertBox('error', { id: 'password-error' });
  const setPassword = h('button', { type: 'submit', id: 'set-password' }, 'Set password');
  const passwordForm = h('form', { class: 'toolbar', id: 'password-form', 'aria-label': 'Set a new password' },
    field('New password (8 or more characters)', password, 'grow'), setPassword);
  passwordForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    setPassword.disabled = true;
    try {
      await api('PUT', '/admin/users/' + seg(id) + '/password', { json: { password: password.value } });
      password.value = '';
      say(passwordError, '');
      say(status, 'New password set for ' + name + '; every session of theirs has ended.', 'ok');
      refreshSessions();
    } catch (e) {
      say(passwordError, 'Cannot set the password: ' + e.message);
    } finally { setPassword.disabled = false; }
  });

  // Roles.
  const roleList = h('ul', { class: 'chips', id: 'user-roles' });
  const roleChoice = h('select', { id: 'role-choice' });
  const addRole = h('button', { type: 'submit', id: 'add-user-role' }, 'Add to role');
  const roleForm = h('form', { class: 'toolbar', id: 'user-role-form', 'aria-label': 'Add to a role' }, field('Role', roleChoice), addRole);
  const roleNote = h('p', { class: 'muted', id: 'user-roles-note' });
  async function refreshRoles() {
    try {
      const [{ roles: mine }, { roles: all }] = await Promise.all([get('/admin/users/' + seg(id) + '/roles'), get('/admin/roles')]);
      if (!current()) return;
      clear(roleList, mine.map((role) => h('li', { 'data-role': role }, h('span', { class: 'mono' }, role),
        h('button', { type: 'button', class: 'danger', 'data-remove-role': role, 'aria-label': 'Remove from ' + role, onclick: async () => {
          try {
            await api('DELETE', '/admin/roles/' + seg(role) + '/members/' + seg(id));
            say(status, 'Removed ' + name + ' from ' + role + '.', 'ok');
          } catch (e) { say(error, 'Cannot remove the role: ' + e.message); }
          refreshRoles();
        } }, 'Remove'))));
      const others = all.map((r) => r.name).filter((r) => !mine.includes(r));
      clear(roleChoice, others.map((r) => h('option', { value: r }, r)));
      roleForm.classList.toggle('hidden', !others.length);
      roleNote.textContent = !all.length ? 'No roles exist yet: create them on the Roles page, then add this user here.'
        : !mine.length ? 'In no role yet.' : others.length ? '' : 'In every role there is.';
    } catch (e) { if (current()) say(error, 'Cannot read the roles: ' + e.message); }
  }
  roleForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!roleChoice.value) return;
    addRole.disabled = true;
    try {
      await api('PUT', '/admin/roles/' + seg(roleChoice.value) + '/members/' + seg(id));
      say(status, 'Added ' + name + ' to ' + roleChoice.value + '.', 'ok');
    } catch (e) { say(error, 'Cannot add the role: ' + e.message); }
    addRole.disabled = false;
    refreshRoles();
  });

  // Sign-in: email, password, two-factor (with the reset) and linked providers.
  const signIn = h('dl', { class: 'facts', id: 'user-sign-in' });
  const identities = h('tbody', { id: 'user-identities' });
  const resetTwoFactor = h('button', { type: 'button', class: 'danger hidden', id: 'reset-2fa' }, 'Turn two-factor off');
  async function refreshSignIn() {
    try {
      const a = await get('/admin/users/' + seg(id) + '/account');
      if (!current()) return;
      const row = (label, value, key) => [h('dt', {}, label), h('dd', { 'data-fact': key }, value)];
      clear(signIn, row('Email', a.email ? a.email + (a.emailVerified ? ' (verified)' : ' (not verified)') : 'none', 'email'),
        row('Password', a.hasPassword ? 'set' : 'none', 'password'),
        row('Two-factor', a.twoFactor ? 'on' : 'off', 'two-factor'),
        ...(a.anonymous ? row('Guest', 'yes (anonymous account)', 'guest') : []));
      resetTwoFactor.classList.toggle('hidden', !a.twoFactor);
      resetTwoFactor.textContent = 'Turn two-factor off';
      clear(identities, a.identities.length ? a.identities.map((i) => h('tr', { 'data-provider': i.provider },
        h('td', { class: 'mono' }, i.provider), h('td', {}, i.email || ''), h('td', {}, i.linkedAt)))
        : h('tr', { class: 'empty' }, h('td', { colspan: 3, class: 'muted', id: 'identities-empty' }, 'No linked providers.')));
    } catch (e) { if (current()) say(error, 'Cannot read how the user signs in: ' + e.message); }
  }
  resetTwoFactor.addEventListener('click', async () => {
    if (resetTwoFactor.textContent === 'Turn two-factor off') { resetTwoFactor.textContent = 'Confirm: turn off two-factor of ' + name; return; }
    try {
      await api('DELETE', '/users/' + seg(id) + '/2fa');
      say(status, 'Two-factor is off for ' + name + '.', 'ok');
    } catch (e) { say(error, 'Cannot turn two-factor off: ' + e.message); }
    refreshSignIn();
  });

  // Sessions and delete.
  const sessions = h('tbody');
  const revokeAll = h('button', { type: 'button', id: 'revoke-all' }, 'Revoke all sessions');
  const deleteUser = h('button', { type: 'button', class: 'danger', id: 'delete-user' }, 'Delete user');
  const path = '/admin/users/' + seg(id) + '/sessions';
  async function refreshSessions() {
    try {
      const list = await get(path);
      if (!current()) return;
      clear(sessions, list.length ? list.map((s) => h('tr', { 'data-session': s.id },
        h('td', { class: 'mono' }, s.id + '\u2026'), h('td', {}, s.lastSeen), h('td', {}, s.expiresAt),
        h('td', {}, h('button', { type: 'button', 'aria-label': 'Revoke session ' + s.id, onclick: async () => {
          try { await api('DELETE', path + '/' + seg(s.id)); say(status, 'Session revoked.', 'ok'); refreshSessions(); } catch (e) { say(error, e.message); }
        } }, 'Revoke')))) : h('tr', { class: 'empty' }, h('td', { colspan: 4, class: 'muted', id: 'sessions-empty' }, 'No live sessions: the user is signed in nowhere.')));
    } catch (e) { if (current()) say(error, 'Cannot list the sessions: ' + e.message); }
  }
  revokeAll.addEventListener('click', async () => {
    try { const r = await api('DELETE', path); say(status, `Revoked ${r.data.count} session(s).`, 'ok'); refreshSessions(); } catch (e) { say(error, e.message); }
  });
  deleteUser.addEventListener('click', async () => {
    if (deleteUser.textContent === 'Delete user') { deleteUser.textContent = 'Confirm: delete ' + name; return; }
    try {
      await api('DELETE', '/users/' + seg(id));
      say(status, 'Deleted ' + name + '.', 'ok');
      ctx.closed();
      ctx.reload();
    } catch (e) { say(error, 'Cannot delete the user: ' + e.message); }
  });

  const facts = [record.username ? 'username ' + record.username : 'no username',
    record.email ? 'email ' + record.email + (record.emailVerified ? ' (verified)' : ' (not verified)') : 'no email'];
  clear(panel, h('h2', { id: 'user-title' }, name), h('p', { class: 'mono muted' }, id),
    h('p', { class: 'muted', id: 'user-facts' }, facts.join(' \u00b7 ')),
    h('h3', {}, 'Sign-in'), signIn, h('div', { class: 'actions' }, resetTwoFactor),
    h('div', { class: 'table-wrap' }, h('table', { id: 'identities-table' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Provider'), h('th', { scope: 'col' }, 'Provider email'),
        h('th', { scope: 'col' }, 'Linked at'))), identities)),
    h('h3', {}, 'Profile fields'),
    h('p', { class: 'muted' }, 'The user\u2019s record as JSON, without the server\u2019s own fields (_id, _createdAt\u2026) and the names above. '
      + 'Remove a key to delete the field.'),
    field('Profile (JSON)', profile), profileError, h('div', { class: 'actions' }, saveProfile),
    h('h3', {}, 'Password'), passwordForm, passwordError,
    h('h3', {}, 'Roles'), roleList, roleNote, roleForm,
    h('h3', {}, 'Sessions'),
    h('div', { class: 'table-wrap' }, h('table', { id: 'sessions-table' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Session'), h('th', { scope: 'col' }, 'Last used'),
        h('th', { scope: 'col' }, 'Expires'), h('th', { scope: 'col' }, h('span', { class: 'hidden' }, 'Actions')))),
      sessions)),
    h('div', { class: 'actions' }, revokeAll, deleteUser));
  refreshSignIn();
  refreshRoles();
  refreshSessions();
}
