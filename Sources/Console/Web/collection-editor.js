// One collection's settings: level, what a user's deletion does, indexes, references, rules and schema,
// checked by the server as you type (?dry_run=true) and saved with
// If-Match; index builds and emptying with their progress; Empty and Drop
// behind a typed confirmation; the stored documents that fail the schema.
import { h, clear, alertBox, say, field, fmt, debounce } from './dom.js';
import { api, get, qs, seg } from './api.js';
import { fieldList, fieldsOf, schemaWith } from './schema-fields.js';

const LEVELS = ['public', 'shared', 'private', 'readonly'];
const ON_DELETE = ['restrict', 'cascade', 'nullify'];
const AREAS = ['permission', 'indexes', 'references', 'rules', 'schema'];
const POLL_MS = 1000;

/** A list of editable rows with an "Add" button; `make(value)` returns a row element with a `value()` method. */
function rowList(id, addLabel, make, changed) {
  const list = h('div', { class: 'rows', id });
  const add = h('button', { type: 'button', id: id.replace(/-list$/, '') + '-add' }, addLabel);
  function append(value) {
    const row = make(value || null, () => { row.remove(); changed(); });
    for (const c of row.querySelectorAll('input, select')) { c.addEventListener('input', changed); c.addEventListener('change', changed); }
    list.append(row);
    return row;
  }
  add.addEventListener('click', () => { const row = append(); row.querySelector('input')?.focus(); changed(); });
  return {
    element: h('div', {}, list, add),
    set(values) { list.replaceChildren(); for (const v of values) append(v); },
    values() { return [...list.children].map((row) => row.value()).filter((v) => v !== null); },
    disable(on) { add.disabled = on; for (const c of list.querySelectorAll('input, select, button')) c.disabled = on; },
  };
}

export function mountEditor(main, name) {
  const isNew = name === null;
  const state = { name, managedBy: isNew ? 'new' : null, version: null, schema: false, dropped: false, pending: null,
    serial: 0, timer: null, stopped: false, violationsAfter: null };

  // Header.
  const title = h('h1', { id: 'collection-title' }, isNew ? 'New collection' : 'Collection ' + name);
  const meta = h('p', { class: 'muted', id: 'collection-meta' });
  const reason = alertBox('warn', { id: 'managed-reason', role: 'note' });
  const loadError = alertBox('error', { id: 'collection-error' });
  const nav = h('p', { class: 'crumbs' }, h('a', { href: '#/collections' }, '← Collections'),
    isNew ? null : [' · ', h('a', { href: '#/records/' + seg(name), id: 'open-records' }, 'Records')]);

  // The form.
  const names = h('datalist', { id: 'collection-names' });
  const nameInput = h('input', { id: 'collection-name', type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: 'products', pattern: '[A-Za-z][A-Za-z0-9_\\-]*' });
  const level = h('select', { id: 'collection-permission' }, h('option', { value: '' }, 'default (default_permission)'),
    LEVELS.map((l) => h('option', { value: l }, l)));
  // What deleting a user does to the documents they created here (docs/ACCOUNTS.md).
  const userDelete = h('select', { id: 'collection-on-user-delete' }, h('option', { value: '' }, 'keep them (default)'),
    h('option', { value: 'cascade' }, 'delete them (cascade)'), h('option', { value: 'anonymise' }, 'keep them without their creator (anonymise)'));
  const errors = Object.fromEntries(AREAS.map((a) => [a, alertBox('error', { id: a + '-error' })]));
  const generalError = alertBox('error', { id: 'settings-error' });
  const checkStatus = alertBox('ok', { id: 'check-status', role: 'status' });

  const indexes = rowList('index-list', 'Add index', (value, remove) => {
    const [path, kind] = value ? (value.endsWith(':geo') ? [value.slice(0, -4), 'geo'] : [value, 'value']) : ['', 'value'];
    const p = h('input', { type: 'text', class: 'i-path', value: path, placeholder: 'field or a.b', 'aria-label': 'Indexed field', autocomplete: 'off', spellcheck: 'false' });
    const k = h('select', { class: 'i-kind', 'aria-label': 'Index kind' }, h('option', { value: 'value', selected: kind === 'value' }, 'value'),
      h('option', { value: 'geo', selected: kind === 'geo' }, 'geo ([lng, lat])'));
    const row = h('div', { class: 'row', 'data-index-row': path }, p, k, h('button', { type: 'button', class: 'danger', 'aria-label': 'Remove index', onclick: remove }, '×'));
    row.value = () => (p.value.trim() ? p.value.trim() + (k.value === 'geo' ? ':geo' : '') : null);
    return row;
  }, changed);

  const references = rowList('reference-list', 'Add reference', (value, remove) => {
    const [f, spec] = value || ['', { collection: '', on_delete: 'restrict' }];
    const fi = h('input', { type: 'text', class: 'r-field', value: f, placeholder: 'field', 'aria-label': 'Reference field', autocomplete: 'off', spellcheck: 'false' });
    const ci = h('input', { type: 'text', class: 'r-collection', value: spec.collection || '', list: 'collection-names', placeholder: 'collection or users', 'aria-label': 'Referenced collection', autocomplete: 'off' });
    const od = h('select', { class: 'r-on-delete', 'aria-label': 'On delete' }, ON_DELETE.map((o) => h('option', { value: o, selected: (spec.on_delete || 'restrict') === o }, 'on delete: ' + o)));
    const row = h('div', { class: 'row' }, fi, ci, od, h('button', { type: 'button', class: 'danger', 'aria-label': 'Remove reference', onclick: remove }, '×'));
    row.value = () => (fi.value.trim() ? [fi.value.trim(), { collection: ci.value.trim(), on_delete: od.value }] : null);
    return row;
  }, changed);

  const rules = h('textarea', { id: 'rules-json', class: 'json short', spellcheck: 'false', 'aria-describedby': 'rules-error',
    placeholder: '{"read": {"status": "published"}, "update": {"owner": "@caller.id"}}' });
  const schema = h('textarea', { id: 'schema-json', class: 'json', spellcheck: 'false', 'aria-describedby': 'schema-error',
    placeholder: '{"type": "object", "properties": {"title": {"type": "string"}}}' });
  const fields = fieldList((list) => {
    let current = null;
    try { current = schema.value.trim() ? JSON.parse(schema.value) : null; } catch { current = null; }
    schema.value = list.length || current ? JSON.stringify(schemaWith(current, list), null, 2) : '';
    changed();
  }, names);

  const save = h('button', { type: 'submit', class: 'primary', id: 'save-collection' }, isNew ? 'Create collection' : 'Save changes');
  const conflict = alertBox('warn', { id: 'collection-conflict', role: 'alert' });
  const saved = alertBox('ok', { id: 'collection-saved' });
  const form = h('form', { class: 'panel settings', id: 'collection-form', novalidate: true },
    names,
    isNew ? field('Name', nameInput) : null,
    field('Access level', level), errors.permission,
    field('When a user is deleted, the documents they created', userDelete),
    h('fieldset', {}, h('legend', {}, 'Indexes'), h('p', { class: 'muted hint' }, 'A value index for fields you filter or sort on; a geo index for [longitude, latitude] points. Built in the background.'),
      indexes.element, errors.indexes),
    h('fieldset', {}, h('legend', {}, 'References'), h('p', { class: 'muted hint' }, 'A field holding the id of a document in another collection, and what deleting that document does.'),
      references.element, errors.references),
    h('fieldset', {}, h('legend', {}, 'Access rules'), field('Rules (JSON: read, create, update, delete filters; empty: the level\u2019s)', rules), errors.rules),
    h('fieldset', {}, h('legend', {}, 'Schema'),
      h('p', { class: 'muted hint' }, 'Fields of the common types write the JSON Schema below; anything else (lengths, patterns, enums) goes in the JSON. Empty: any document.'),
      fields.element, field('Schema (JSON Schema 2020-12)', schema), errors.schema),
    generalError, checkStatus,
    h('div', { class: 'actions' }, save), conflict, saved);

  // Index builds, emptying, violations, Empty/Drop.
  const indexBody = h('tbody');
  const indexPanel = h('section', { class: 'panel hidden', id: 'index-states', 'aria-labelledby': 'index-states-title' },
    h('h2', { id: 'index-states-title' }, 'Indexes in the database'),
    h('div', { class: 'table-wrap' }, h('table', { class: 'compact' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Index'), h('th', { scope: 'col' }, 'State'), h('th', { scope: 'col' }, 'Progress'))), indexBody)));
  const emptying = alertBox('ok', { id: 'emptying-status', role: 'status' });

  const violationsSummary = h('p', { id: 'violations-summary', class: 'muted' });
  const violationsBody = h('tbody');
  const checkViolations = h('button', { type: 'button', id: 'check-violations' }, 'Check the stored documents');
  const moreViolations = h('button', { type: 'button', id: 'violations-next', class: 'hidden' }, 'Check the next documents');
  const violationsError = alertBox('error', { id: 'violations-error' });
  const violationsPanel = h('section', { class: 'panel hidden', id: 'violations', 'aria-labelledby': 'violations-title' },
    h('h2', { id: 'violations-title' }, 'Documents that fail the schema'),
    h('p', { class: 'muted hint' }, 'A schema judges later writes only; documents stored before it are never rejected on read. This lists those that fail it.'),
    h('div', { class: 'actions' }, checkViolations, moreViolations), violationsError, violationsSummary,
    h('div', { class: 'table-wrap' }, h('table', { id: 'violations-table', class: 'compact' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Document'), h('th', { scope: 'col' }, 'Field'), h('th', { scope: 'col' }, 'Keyword'), h('th', { scope: 'col' }, 'Message'))),
      violationsBody)));

  const emptyButton = h('button', { type: 'button', class: 'danger', id: 'empty-collection' }, 'Empty…');
  const dropButton = h('button', { type: 'button', class: 'danger', id: 'drop-collection' }, 'Drop…');
  const confirmLabel = h('label', { for: 'confirm-name' });
  const confirmInput = h('input', { id: 'confirm-name', type: 'text', autocomplete: 'off', spellcheck: 'false' });
  const confirmButton = h('button', { type: 'button', class: 'danger', id: 'confirm-action', disabled: true });
  const cancelButton = h('button', { type: 'button', id: 'cancel-action' }, 'Cancel');
  const confirmBox = h('div', { class: 'confirm hidden', id: 'confirm-box' }, confirmLabel, confirmInput, h('div', { class: 'actions' }, confirmButton, cancelButton));
  const dangerError = alertBox('error', { id: 'danger-error' });
  const dangerPanel = h('section', { class: 'panel danger-zone hidden', id: 'danger', 'aria-labelledby': 'danger-title' },
    h('h2', { id: 'danger-title' }, 'Empty or drop'),
    h('p', { class: 'muted hint', id: 'danger-hint' }, 'Empty deletes every document and keeps the settings; Drop deletes the settings and every document. Both run in the background; a document a reference keeps stays and is counted.'),
    h('div', { class: 'actions' }, emptyButton, dropButton), confirmBox, dangerError, emptying);

  main.append(nav, title, meta, loadError, reason, h('div', { class: 'editor-page' }, form,
    h('div', { class: 'side' }, indexPanel, violationsPanel, dangerPanel)));

  // ---- Settings from the form, and the server's check as you type.

  function readJSON(textarea, area) {
    const text = textarea.value.trim();
    if (!text) { textarea.removeAttribute('aria-invalid'); return { value: null }; }
    try {
      const value = JSON.parse(text);
      textarea.removeAttribute('aria-invalid');
      return { value };
    } catch (e) {
      textarea.setAttribute('aria-invalid', 'true');
      say(errors[area], 'Not JSON yet: ' + e.message);
      return { bad: true };
    }
  }

  /** The six settings (null: not set), or null when a JSON editor does not parse. */
  function settingsFromForm() {
    for (const a of AREAS) say(errors[a], '');
    const r = readJSON(rules, 'rules');
    const s = readJSON(schema, 'schema');
    if (r.bad || s.bad) return null;
    const refs = references.values();
    const idx = indexes.values();
    return {
      permission: level.value || null,
      indexes: idx.length ? idx : null,
      references: refs.length ? Object.fromEntries(refs) : null,
      rules: r.value,
      schema: s.value,
      on_user_delete: userDelete.value || null,
    };
  }

  function target() { return isNew ? nameInput.value.trim() : state.name; }

  /** The request that creates or changes the collection with these settings. */
  function request(settings, dryRun) {
    const suffix = dryRun ? '?dry_run=true' : '';
    if (state.managedBy === 'runtime') {
      const headers = dryRun || state.version === null ? {} : { 'If-Match': `"${state.version}"` };
      return api('PATCH', '/admin/collections/' + seg(state.name) + suffix, { json: settings, headers });
    }
    const body = { name: target() };
    for (const [k, v] of Object.entries(settings)) if (v !== null) body[k] = v;
    return api('POST', '/admin/collections' + suffix, { json: body });
  }

  /** Shows the server's refusal beside the part of the form it names. */
  function showRefusal(e) {
    const text = (e.code ? e.code + ': ' : '') + e.message;
    const area = AREAS.find((a) => new RegExp('\\.' + a + '\\b').test(e.message || ''));
    if (area) { say(errors[area], text); say(generalError, ''); } else say(generalError, text);
  }

  const check = debounce(async () => {
    if (state.managedBy === 'config' || state.dropped || state.stopped) return;
    const serial = ++state.serial;
    say(checkStatus, ''); say(generalError, '');
    const settings = settingsFromForm();
    if (!settings) return;
    if (isNew && !target()) { say(generalError, 'Give the collection a name.'); return; }
    try {
      await request(settings, true);
      if (serial !== state.serial || state.stopped) return;
      say(checkStatus, 'The server accepts these settings.', 'ok');
    } catch (e) {
      if (serial !== state.serial || state.stopped) return;
      showRefusal(e);
    }
  }, 400);

  function changed() { say(saved, ''); check(); }
  for (const c of [nameInput, level, rules, schema]) c.addEventListener('input', changed);
  level.addEventListener('change', changed);
  userDelete.addEventListener('change', changed);
  // Typing JSON keeps the field list in step when the schema is one it can show.
  schema.addEventListener('input', debounce(() => {
    try { const list = fieldsOf(schema.value.trim() ? JSON.parse(schema.value) : {}); if (list) fields.set(list); } catch { /* not JSON yet */ }
  }, 400));

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    ++state.serial; // an answer to an older check must not overwrite this one
    say(conflict, ''); say(saved, ''); say(checkStatus, ''); say(generalError, '');
    const settings = settingsFromForm();
    if (!settings) return;
    if (isNew && !target()) { say(generalError, 'Give the collection a name.'); nameInput.focus(); return; }
    save.disabled = true;
    try {
      const r = await request(settings, false);
      if (r.status === 201) {
        if (isNew) { location.hash = '#/collections/edit/' + seg(r.data.name); return; }
        await load();
        say(saved, 'Set up at run time: version ' + r.data.version + '.', 'ok');
      } else {
        await load();
        say(saved, 'Saved: version ' + r.data.version + '.', 'ok');
      }
    } catch (e) {
      if (e.status === 412) {
        say(conflict, 'Conflict: someone changed these settings after you opened them, so yours were not saved. Reload the page to see theirs.');
      } else showRefusal(e);
    } finally {
      save.disabled = false;
    }
  });

  // ---- Loading, and what runs in the background.

  function fill(detail) {
    const s = detail.settings || {};
    level.value = s.permission || '';
    userDelete.value = s.on_user_delete || '';
    indexes.set(s.indexes || []);
    references.set(Object.entries(s.references || {}));
    rules.value = s.rules ? JSON.stringify(s.rules, null, 2) : '';
    schema.value = s.schema ? JSON.stringify(s.schema, null, 2) : '';
    fields.set(fieldsOf(s.schema || {}) || []);
  }

  /** Whether the form can be edited and saved: not for a collection the config file sets up, nor one dropped. */
  function lock(locked) {
    for (const c of [nameInput, level, userDelete, rules, schema, save]) c.disabled = locked;
    indexes.disable(locked);
    references.disable(locked);
    fields.disable(locked);
  }

  function describe(detail) {
    const who = { config: 'managed by the config file', runtime: 'managed at run time', none: 'written to without settings (saving sets it up at run time)' }[detail.managedBy] || detail.managedBy;
    meta.textContent = `${fmt.number(detail.count)} documents · level ${detail.permission} · ${who}` + (detail.version ? ` · version ${detail.version}` : '');
    const readOnly = detail.managedBy === 'config';
    say(reason, readOnly ? 'Read-only here: ' + (detail.reason || 'the config file sets this collection up.') : '');
    lock(readOnly || state.dropped);
    if (readOnly) rules.placeholder = schema.placeholder = ''; // no example text that looks like settings
    save.classList.toggle('hidden', readOnly);
    save.textContent = detail.managedBy === 'none' ? 'Set up collection' : 'Save changes';
    dropButton.classList.toggle('hidden', readOnly);
  }

  /** The database's indexes, and those the settings name that the builder has not taken up yet ('pending'). */
  function indexStates(detail) {
    const present = new Set(detail.indexes.map((i) => i.index));
    const wanted = (detail.settings && detail.settings.indexes) || [];
    return [...detail.indexes, ...wanted.filter((i) => !present.has(i)).map((i) => ({ index: i, state: 'pending' }))];
  }

  function renderStatus(detail) {
    indexPanel.classList.remove('hidden');
    dangerPanel.classList.remove('hidden');
    violationsPanel.classList.toggle('hidden', !detail.schema);
    const states = indexStates(detail);
    clear(indexBody, states.length ? states.map((i) => h('tr', { 'data-index': i.index, 'data-state': i.state },
      h('td', {}, h('code', {}, i.index)), h('td', {}, h('span', { class: 'badge ' + i.state }, i.state)),
      h('td', {}, i.state === 'building' && i.rowsTotal
        ? [h('progress', { value: i.rowsDone, max: i.rowsTotal, 'aria-label': 'Rows indexed' }), ` ${fmt.number(i.rowsDone)} of ${fmt.number(i.rowsTotal)} rows`]
        : h('span', { class: 'muted' }, i.state === 'ready' ? '—' : i.state === 'pending' ? 'waiting to be built' : '…'))))
      : h('tr', {}, h('td', { colspan: 3, class: 'muted' }, 'No indexes.')));
    const e = detail.emptying;
    if (e) {
      const kept = e.kept ? `, ${fmt.number(e.kept)} kept by references` + (e.reason ? ` (${e.reason})` : '') : '';
      say(emptying, (e.done ? (state.dropped ? 'Dropped: ' : 'Emptied: ') : (state.dropped ? 'Dropping: ' : 'Emptying: '))
        + `${fmt.number(e.deleted)} deleted${kept}` + (e.done ? '.' : '…'), e.kept ? 'warn' : 'ok');
    }
  }

  function busy(detail) {
    const states = indexStates(detail);
    // An index only waiting for the builder is looked at a limited number of times.
    const pending = states.some((i) => i.state === 'pending') && ++state.pendingPolls <= 30;
    return pending || states.some((i) => i.state === 'building' || i.state === 'dropping') || (detail.emptying && !detail.emptying.done);
  }

  /** Reads the collection again; only the status parts change unless `refill`. */
  async function load(refill = true) {
    clearTimeout(state.timer);
    if (refill) state.pendingPolls = 0;
    let detail;
    try {
      detail = await get('/admin/collections/' + seg(state.name));
    } catch (e) {
      if (state.stopped) return;
      if (e.status === 404 && state.dropped) {
        say(emptying, 'Dropped: its settings and documents are gone.', 'ok');
        indexPanel.classList.add('hidden');
        lock(true); // gone before any look saw it dropping: nothing left to save
        return;
      }
      say(loadError, 'Cannot read the collection: ' + e.message);
      return;
    }
    if (state.stopped) return;
    say(loadError, '');
    state.managedBy = state.dropped ? 'dropped' : detail.managedBy;
    // The form's version moves only with the form: a status poll that adopted a newer version
    // would let Save overwrite someone else's change without the 412 (If-Match) that stops it.
    if (refill) { state.version = detail.version ?? null; fill(detail); }
    describe(detail);
    renderStatus(detail);
    if (busy(detail)) state.timer = setTimeout(() => load(false), POLL_MS);
  }

  // ---- Violations.

  async function violations(after) {
    checkViolations.disabled = moreViolations.disabled = true;
    say(violationsError, '');
    try {
      const r = await get('/admin/collections/' + seg(state.name) + '/violations' + qs({ after }));
      if (state.stopped) return;
      if (!after) { clear(violationsBody); state.scanned = 0; state.failing = 0; }
      state.scanned += r.scanned;
      state.failing += r.failing.length;
      for (const f of r.failing) {
        f.violations.forEach((v, n) => violationsBody.append(h('tr', { 'data-violation-id': f.id, 'data-pointer': v.pointer },
          h('td', {}, n === 0 ? h('code', {}, f.id) : ''), h('td', {}, h('code', {}, v.pointer || '(document)')),
          h('td', {}, v.keyword), h('td', {}, v.message))));
      }
      state.violationsAfter = r.next;
      moreViolations.classList.toggle('hidden', !r.next);
      violationsSummary.textContent = `${fmt.number(state.scanned)} documents checked${r.next ? ' so far' : ''}: `
        + (state.failing ? `${fmt.number(state.failing)} fail the schema.` : 'none fails the schema.');
    } catch (e) {
      if (!state.stopped) say(violationsError, 'Cannot check the documents: ' + e.message);
    } finally {
      checkViolations.disabled = moreViolations.disabled = false;
    }
  }
  checkViolations.addEventListener('click', () => violations(null));
  moreViolations.addEventListener('click', () => violations(state.violationsAfter));

  // ---- Empty and Drop, behind a typed confirmation.

  function ask(action) {
    state.pending = action;
    confirmBox.classList.remove('hidden');
    confirmLabel.textContent = `Type ${state.name} to ${action === 'drop' ? 'drop it: its settings and every document go' : 'empty it: every document goes'}`;
    confirmButton.textContent = action === 'drop' ? 'Drop ' + state.name : 'Empty ' + state.name;
    confirmInput.value = '';
    confirmButton.disabled = true;
    say(dangerError, '');
    confirmInput.focus();
  }
  emptyButton.addEventListener('click', () => ask('empty'));
  dropButton.addEventListener('click', () => ask('drop'));
  confirmInput.addEventListener('input', () => { confirmButton.disabled = confirmInput.value !== state.name; });
  cancelButton.addEventListener('click', () => { state.pending = null; confirmBox.classList.add('hidden'); });
  confirmButton.addEventListener('click', async () => {
    if (confirmInput.value !== state.name) return;
    confirmButton.disabled = true;
    const q = qs({ confirm: state.name });
    try {
      if (state.pending === 'drop') {
        await api('DELETE', '/admin/collections/' + seg(state.name) + q);
        state.dropped = true;
        say(emptying, 'Dropping…', 'ok');
      } else {
        await api('POST', '/admin/collections/' + seg(state.name) + '/empty' + q);
        say(emptying, 'Emptying…', 'ok');
      }
      confirmBox.classList.add('hidden');
      state.pending = null;
      await load(false);
    } catch (e) {
      say(dangerError, (e.code ? e.code + ': ' : '') + e.message);
      confirmButton.disabled = false;
    }
  });

  // Collection names for the reference pickers.
  get('/admin/collections').then((list) => {
    if (!state.stopped) clear(names, ['users', ...list.map((c) => c.name)].map((n) => h('option', { value: n })));
  }).catch(() => { /* the pickers work without suggestions */ });

  if (isNew) {
    nameInput.focus();
  } else {
    load();
  }
  return () => { state.stopped = true; clearTimeout(state.timer); };
}
