// Roles (create, delete) and a role's members (add by user id, remove,
// paged). `_acl.read` / `_acl.write` name a role as role:<name>.
import { h, clear, alertBox, say, field } from './dom.js';
import { api, get, qs, seg } from './api.js';

export function mount(main, parts) {
  let stopped = false;
  const error = alertBox('error', { id: 'roles-error' });
  const status = alertBox('ok', { id: 'roles-status' });
  const roles = h('tbody');
  const name = h('input', { id: 'role-name', type: 'text', autocomplete: 'off', required: true, maxlength: 64,
    pattern: '[A-Za-z0-9_.\\-]+', placeholder: 'moderators' });
  const add = h('button', { type: 'submit', class: 'primary', id: 'add-role' }, 'Create role');
  const form = h('form', { class: 'toolbar', id: 'role-form', 'aria-label': 'Create a role' }, field('Name', name), add);
  const panel = h('section', { class: 'panel hidden', id: 'role-members', 'aria-labelledby': 'members-title' });

  main.append(h('h1', {}, 'Roles'),
    h('p', { class: 'muted' }, 'Named groups of users. A document\u2019s _acl.read and _acl.write may name a role as role:<name>; a membership change holds from the member\u2019s next request.'),
    error, status,
    h('div', { class: 'split' },
      h('div', { class: 'table-wrap' }, h('table', { id: 'roles-table' },
        h('thead', {}, h('tr', {}, ['Name', 'Members', 'Created', 'Actions'].map((t) => h('th', { scope: 'col' }, t)))), roles)),
      panel),
    h('h2', { class: 'spaced' }, 'Create a role'), form);

  async function act(method, path, message) {
    try { await api(method, path); say(status, message, 'ok'); say(error, ''); return true; } catch (e) { say(status, ''); say(error, e.message); return false; }
  }

  async function loadRoles() {
    try {
      const { roles: list } = await get('/admin/roles');
      if (stopped) return;
      clear(roles, list.length ? list.map((r) => {
        const del = h('button', { type: 'button', class: 'danger', 'data-delete': r.name }, 'Delete');
        del.addEventListener('click', async () => {
          if (del.textContent === 'Delete') { del.textContent = 'Confirm delete'; return; }
          if (await act('DELETE', '/admin/roles/' + seg(r.name), 'Deleted ' + r.name + ' and its memberships.')) {
            if (panel.dataset.role === r.name) panel.classList.add('hidden');
            loadRoles();
          }
        });
        return h('tr', { 'data-role': r.name }, h('td', { class: 'mono' }, r.name), h('td', {}, r.members), h('td', {}, r.createdAt),
          h('td', {}, h('div', { class: 'actions' },
            h('button', { type: 'button', 'data-members': r.name, onclick: () => { location.hash = '#/roles/' + seg(r.name); } }, 'Members'), del)));
      }) : h('tr', { class: 'empty' }, h('td', { colspan: 4, class: 'muted', id: 'roles-empty' },
        'No roles yet. A role names a group of users: create one below, add members, then let a document\u2019s '
        + '_acl.read or _acl.write name it as role:<name>, or a rule test it.')));
    } catch (e) { if (!stopped) say(error, 'Cannot list the roles: ' + e.message); }
  }

  async function showMembers(role) {
    panel.dataset.role = role;
    panel.classList.remove('hidden');
    const base = '/admin/roles/' + seg(role) + '/members';
    const rows = h('tbody');
    const more = h('button', { type: 'button', id: 'more-members', class: 'hidden' }, 'More');
    const user = h('input', { id: 'member-id', type: 'text', autocomplete: 'off', required: true, placeholder: 'user _id' });
    const addMember = h('button', { type: 'submit', class: 'primary', id: 'add-member' }, 'Add member');
    const memberForm = h('form', { class: 'toolbar', id: 'member-form', 'aria-label': 'Add a member' }, field('User id', user, 'grow'), addMember);
    clear(panel, h('h3', { id: 'members-title' }, 'Members of ' + role),
      h('div', { class: 'table-wrap' }, h('table', { id: 'members-table' },
        h('thead', {}, h('tr', {}, ['User id', 'Username', 'Actions'].map((t) => h('th', { scope: 'col' }, t)))), rows)),
      more, memberForm);

    function row(m) {
      const remove = h('button', { type: 'button', class: 'danger', 'data-remove': m.userID }, 'Remove');
      remove.addEventListener('click', async () => {
        if (await act('DELETE', base + '/' + seg(m.userID), 'Removed ' + (m.username || m.userID) + ' from ' + role + '.')) {
          showMembers(role);
          loadRoles();
        }
      });
      return h('tr', { 'data-member': m.userID }, h('td', { class: 'mono' }, m.userID), h('td', {}, m.username ?? '–'),
        h('td', {}, h('div', { class: 'actions' }, remove)));
    }

    async function page(after) {
      try {
        const data = await get(base + qs({ limit: 100, after }));
        if (stopped || panel.dataset.role !== role) return;
        if (!after) rows.replaceChildren();
        rows.append(...data.members.map(row));
        if (!rows.children.length) rows.append(h('tr', { class: 'empty' }, h('td', { colspan: 3, class: 'muted', id: 'members-empty' },
          'No members yet. Add one by user id below (the Users page shows ids, and adds roles from a user\u2019s page).')));
        more.classList.toggle('hidden', !data.next);
        more.onclick = () => page(data.next);
      } catch (e) { say(error, 'Cannot list the members of ' + role + ': ' + e.message); }
    }

    memberForm.addEventListener('submit', async (event) => {
      event.preventDefault();
      addMember.disabled = true;
      try {
        const id = user.value.trim();
        const r = await api('PUT', base + '/' + seg(id));
        say(error, '');
        say(status, r.data.changed ? 'Added ' + id + ' to ' + role + '.' : id + ' was a member already.', 'ok');
        showMembers(role);
        loadRoles();
      } catch (e) {
        say(status, '');
        say(error, 'Cannot add the member: ' + e.message);
      } finally { addMember.disabled = false; }
    });
    page();
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    add.disabled = true;
    try {
      const r = await api('POST', '/admin/roles', { json: { name: name.value.trim() } });
      say(error, '');
      say(status, 'Created ' + r.data.name + '.', 'ok');
      form.reset();
      loadRoles();
    } catch (e) {
      say(status, '');
      say(error, 'Cannot create the role: ' + e.message);
    } finally { add.disabled = false; }
  });

  loadRoles();
  if (parts[0]) showMembers(parts[0]);
  return () => { stopped = true; };
}
