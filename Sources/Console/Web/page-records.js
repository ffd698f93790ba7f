// One collection's records: a MongoDB filter checked by the server's own
// compiler as you type, sort by column, paging, and a JSON editor that
// writes with If-Match so a concurrent edit shows as a conflict. A
// collection with a schema gets a form of its simple fields beside the JSON
// (record-form.js), and a SchemaViolation shows at the failing fields.
import { h, clear, alertBox, say, field, fmt, debounce } from './dom.js';
import { api, get, qs, seg } from './api.js';
import { recordForm } from './record-form.js';

const HIDDEN = new Set(['_acl', '_createdAt', '_updatedAt']);
const MAX_COLUMNS = 8;

export function mount(main, params) {
  const state = { collection: params[0] || '', filter: {}, sort: null, limit: 25, skip: 0, total: null, rows: [], open: null };
  let stopped = false;
  let listSerial = 0;

  const select = h('select', { id: 'collection-select' });
  const filterInput = h('input', { id: 'filter', type: 'text', placeholder: '{"status": "open"}', spellcheck: 'false', autocomplete: 'off', class: 'mono' });
  const limitSelect = h('select', { id: 'limit' }, [10, 25, 50, 100].map((n) => h('option', { value: n, selected: n === state.limit }, n)));
  const newButton = h('button', { type: 'button', id: 'new-record' }, 'New record');
  const filterError = alertBox('error', { id: 'filter-error' });
  const listError = alertBox('error', { id: 'list-error' });
  const head = h('thead');
  const body = h('tbody');
  const prev = h('button', { type: 'button', id: 'prev-page' }, 'Previous');
  const next = h('button', { type: 'button', id: 'next-page' }, 'Next');
  const range = h('span', { id: 'page-range', 'aria-live': 'polite' });

  // The editor.
  const editorTitle = h('h2', { id: 'editor-title' });
  const editorMeta = h('p', { class: 'muted', id: 'editor-meta' });
  const textarea = h('textarea', { id: 'record-json', class: 'json', spellcheck: 'false', 'aria-describedby': 'json-error' });
  const jsonError = alertBox('error', { id: 'json-error' });
  const readers = h('input', { id: 'acl-read', type: 'text', autocomplete: 'off', placeholder: 'user ids, comma-separated' });
  const writers = h('input', { id: 'acl-write', type: 'text', autocomplete: 'off', placeholder: 'user ids, comma-separated' });
  const save = h('button', { type: 'button', class: 'primary', id: 'save-record' }, 'Save');
  const remove = h('button', { type: 'button', class: 'danger', id: 'delete-record' }, 'Delete');
  const close = h('button', { type: 'button', id: 'close-editor' }, 'Close');
  const conflict = alertBox('warn', { id: 'conflict', role: 'alert' });
  const reloadButton = h('button', { type: 'button', id: 'reload-record', class: 'hidden' }, 'Load the current version');
  const status = alertBox('ok', { id: 'editor-status' });
  // The schema's form writes each edit into the JSON, which stays the whole truth.
  const form = recordForm((name, value) => {
    let doc;
    try { doc = JSON.parse(textarea.value); } catch (e) { say(jsonError, 'Fix the JSON first: ' + e.message); return; }
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) { say(jsonError, 'A record is a JSON object.'); return; }
    if (value === undefined) delete doc[name]; else doc[name] = value;
    textarea.value = JSON.stringify(doc, null, 2);
    clearParseError();
  });
  // A JSON editor that parses again clears only its own "not JSON" message, never the server's answer.
  const PARSE_MESSAGES = ['Not valid JSON', 'Fix the JSON first', 'A record is a JSON object'];
  function clearParseError() {
    textarea.removeAttribute('aria-invalid');
    if (PARSE_MESSAGES.some((m) => jsonError.textContent.startsWith(m))) say(jsonError, '');
  }
  const editor = h('section', { class: 'panel hidden', id: 'editor', 'aria-labelledby': 'editor-title' },
    editorTitle, editorMeta, form.element, field('Document (JSON, without _acl)', textarea), jsonError,
    h('div', { class: 'acl' }, field('Readers (_acl.read)', readers), field('Writers (_acl.write)', writers)),
    h('div', { class: 'actions' }, save, remove, close), conflict, reloadButton, status);

  const split = h('div', { class: 'split', id: 'records-split' },
    h('div', {}, h('div', { class: 'table-wrap' }, h('table', { id: 'records-table' }, head, body)),
      h('div', { class: 'pager' }, prev, range, next)),
    editor);
  // The table takes the whole width; the editor column appears only while a record is open.
  function showEditor(on) { editor.classList.toggle('hidden', !on); split.classList.toggle('editing', on); }

  main.append(h('h1', {}, 'Records'),
    h('div', { class: 'toolbar' }, field('Collection', select), field('Filter (MongoDB query)', filterInput, 'grow'),
      field('Rows per page', limitSelect), newButton),
    filterError, listError, split);

  // Collections for the picker.
  get('/admin/collections').then((list) => {
    if (stopped) return;
    const names = list.map((c) => c.name);
    if (list.some((c) => c.name === state.collection && c.schema)) loadSchema();
    if (state.collection && !names.includes(state.collection)) names.unshift(state.collection);
    clear(select, h('option', { value: '' }, '— choose —'), names.map((n) => h('option', { value: n, selected: n === state.collection }, n)));
  }).catch((e) => say(listError, 'Cannot list the collections: ' + e.message));
  select.addEventListener('change', () => { location.hash = '#/records/' + seg(select.value); });

  function base() { return '/' + seg(state.collection); }

  // The collection's schema, for the form (none: JSON only).
  function loadSchema() {
    get('/admin/collections/' + seg(state.collection)).then((detail) => {
      if (stopped) return;
      form.setSchema(detail.settings && detail.settings.schema);
      if (state.open) { try { form.fill(JSON.parse(textarea.value)); } catch { /* not JSON now */ } }
    }).catch(() => { /* without its settings the JSON editor still works */ });
  }

  async function load() {
    if (!state.collection) {
      clear(body, h('tr', {}, h('td', { class: 'muted' }, 'Choose a collection.')));
      range.textContent = '';
      prev.disabled = next.disabled = newButton.disabled = true;
      return;
    }
    newButton.disabled = false;
    const serial = ++listSerial;
    const query = qs({
      query: Object.keys(state.filter).length ? JSON.stringify(state.filter) : '',
      sort: state.sort ? JSON.stringify({ [state.sort.field]: state.sort.dir }) : '',
      // The total costs a second pass over the matches; only the unfiltered one is an index count.
      limit: state.limit, skip: state.skip, count: Object.keys(state.filter).length ? '' : 'true',
    });
    try {
      const r = await api('GET', base() + query);
      if (stopped || serial !== listSerial) return;
      say(filterError, '');
      filterInput.removeAttribute('aria-invalid');
      say(listError, '');
      state.rows = r.data;
      state.total = r.headers.has('X-Total-Count') ? Number(r.headers.get('X-Total-Count')) : null;
      render();
    } catch (e) {
      if (stopped || serial !== listSerial) return;
      // No rows stay under an error: they would look like the answer to the rejected filter.
      state.rows = []; state.total = null;
      clear(body, h('tr', {}, h('td', { class: 'muted', colspan: head.querySelectorAll('th').length || 1 },
        e.status === 400 ? 'The server rejected this filter; see the message above.' : 'No rows: the list failed.')));
      range.textContent = '';
      prev.disabled = next.disabled = true;
      if (e.status === 400) {
        filterInput.setAttribute('aria-invalid', 'true');
        say(filterError, (e.code ? e.code + ': ' : '') + e.message);
      } else {
        say(listError, 'Cannot list the records: ' + e.message);
      }
    }
  }

  function columns() {
    const seen = ['_id'];
    for (const row of state.rows) for (const key of Object.keys(row)) if (!seen.includes(key) && !HIDDEN.has(key)) seen.push(key);
    const chosen = seen.slice(0, MAX_COLUMNS);
    if (state.sort && !chosen.includes(state.sort.field)) chosen.push(state.sort.field);
    chosen.push('_updatedAt');
    return chosen;
  }

  function render() {
    const cols = columns();
    clear(head, h('tr', {}, cols.map((c) => {
      const dir = state.sort && state.sort.field === c ? state.sort.dir : 0;
      const label = c + (dir === 1 ? ' ▲' : dir === -1 ? ' ▼' : '');
      return h('th', { scope: 'col', 'aria-sort': dir === 1 ? 'ascending' : dir === -1 ? 'descending' : 'none' },
        h('button', { type: 'button', class: 'sort', 'data-sort': c, onclick: () => sortBy(c) }, label));
    })));
    if (!state.rows.length) {
      clear(body, h('tr', {}, h('td', { colspan: cols.length, class: 'muted' }, 'No records match.')));
    } else {
      clear(body, state.rows.map((row) => h('tr', { 'data-id': row._id },
        cols.map((c) => c === '_id'
          ? h('td', { class: 'cell' }, h('button', { type: 'button', class: 'link', 'data-open': row._id, onclick: () => open(row._id) }, row._id))
          : h('td', { class: 'cell', title: fmt.json(row[c]) }, fmt.json(row[c]))))));
    }
    const first = state.rows.length ? state.skip + 1 : 0;
    const last = state.skip + state.rows.length;
    range.textContent = `Rows ${fmt.number(first)}–${fmt.number(last)}` + (state.total === null ? ' (filtered)' : ` of ${fmt.number(state.total)}`);
    prev.disabled = state.skip === 0;
    next.disabled = state.total === null ? state.rows.length < state.limit : last >= state.total;
  }

  function sortBy(c) {
    const dir = state.sort && state.sort.field === c ? state.sort.dir : 0;
    state.sort = dir === 0 ? { field: c, dir: 1 } : dir === 1 ? { field: c, dir: -1 } : null;
    state.skip = 0;
    load().then(() => { const b = head.querySelector(`button[data-sort="${CSS.escape(c)}"]`); if (b) b.focus(); });
  }

  const validate = debounce(() => { state.skip = 0; load(); }, 300);
  filterInput.addEventListener('input', () => {
    const text = filterInput.value.trim();
    if (!text) { state.filter = {}; say(filterError, ''); validate(); return; }
    let parsed;
    try { parsed = JSON.parse(text); } catch (e) {
      filterInput.setAttribute('aria-invalid', 'true');
      say(filterError, 'Not JSON yet: ' + e.message);
      return;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      filterInput.setAttribute('aria-invalid', 'true');
      say(filterError, 'A filter is a JSON object, such as {"status": "open"}.');
      return;
    }
    state.filter = parsed;
    validate();
  });
  limitSelect.addEventListener('change', () => { state.limit = Number(limitSelect.value); state.skip = 0; load(); });
  prev.addEventListener('click', () => { state.skip = Math.max(0, state.skip - state.limit); load(); });
  next.addEventListener('click', () => { state.skip += state.limit; load(); });

  // The editor.
  function show(doc, etag) {
    state.open = doc ? { id: doc._id, etag, doc } : { id: null, etag: null, doc: null };
    showEditor(true);
    say(conflict, ''); say(status, ''); say(jsonError, '');
    form.clearErrors();
    reloadButton.classList.add('hidden');
    remove.textContent = 'Delete';
    remove.disabled = !doc;
    if (doc) {
      const { _acl, ...rest } = doc;
      textarea.value = JSON.stringify(rest, null, 2);
      readers.value = ((_acl && _acl.read) || []).join(', ');
      writers.value = ((_acl && _acl.write) || []).join(', ');
      editorTitle.textContent = 'Record ' + doc._id;
      editorMeta.textContent = `created ${doc._createdAt || '?'} · updated ${doc._updatedAt || '?'} · creator ${(_acl && _acl.creator) || 'none (admin)'}`;
    } else {
      textarea.value = '{\n  \n}';
      readers.value = writers.value = '';
      editorTitle.textContent = 'New record in ' + state.collection;
      editorMeta.textContent = 'Leave _id out for a server-made id.';
    }
    form.fill(doc);
  }

  async function open(id) {
    try {
      const r = await api('GET', base() + '/' + seg(id));
      show(r.data, r.headers.get('ETag') || `"${r.data._updatedAt}"`);
      textarea.focus();
    } catch (e) {
      say(listError, 'Cannot open ' + id + ': ' + e.message);
    }
  }

  function list(text) { return text.split(',').map((x) => x.trim()).filter(Boolean); }

  function documentFromEditor() {
    let doc;
    try { doc = JSON.parse(textarea.value); } catch (e) { say(jsonError, 'Not valid JSON: ' + e.message); return null; }
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) { say(jsonError, 'A record is a JSON object.'); return null; }
    say(jsonError, '');
    delete doc._createdAt; delete doc._updatedAt; delete doc._acl;
    doc._acl = { read: list(readers.value), write: list(writers.value) };
    return doc;
  }

  textarea.addEventListener('input', debounce(() => {
    try { form.fill(JSON.parse(textarea.value)); clearParseError(); } catch (e) {
      say(jsonError, 'Not valid JSON: ' + e.message); textarea.setAttribute('aria-invalid', 'true');
    }
  }, 250));

  function showConflict(e) {
    say(conflict, 'Conflict: this record changed after you opened it, so your change was not saved. ' +
      'Load the current version and apply your change again.');
    reloadButton.classList.remove('hidden');
    if (e.headers && e.headers.get('ETag')) state.open.currentEtag = e.headers.get('ETag');
  }

  save.addEventListener('click', async () => {
    const doc = documentFromEditor();
    if (!doc) return;
    say(status, ''); say(conflict, '');
    form.clearErrors();
    save.disabled = true;
    try {
      let r;
      if (state.open.id) {
        delete doc._id;
        r = await api('PUT', base() + '/' + seg(state.open.id), { json: doc, headers: { 'If-Match': state.open.etag } });
      } else {
        r = await api('POST', base(), { json: doc });
      }
      show(r.data, r.headers.get('ETag') || `"${r.data._updatedAt}"`);
      say(status, r.status === 201 ? 'Created.' : 'Saved.', 'ok');
      load();
    } catch (e) {
      if (e.status === 412) showConflict(e);
      else if (e.code === 'SchemaViolation' && Array.isArray(e.body.violations)) {
        // Each failure at its field; the rest (nested values, the document itself) under the JSON.
        const rest = form.showViolations(e.body.violations);
        say(jsonError, 'SchemaViolation: ' + (rest.length
          ? rest.map((v) => (v.pointer || '(document)') + ': ' + v.message).join('; ')
          : 'see the marked fields.'));
      } else say(jsonError, (e.code ? e.code + ': ' : '') + e.message);
    } finally {
      save.disabled = false;
    }
  });

  remove.addEventListener('click', async () => {
    if (remove.textContent === 'Delete') { remove.textContent = 'Confirm delete'; return; }
    remove.disabled = true;
    try {
      await api('DELETE', base() + '/' + seg(state.open.id), { headers: { 'If-Match': state.open.etag } });
      showEditor(false);
      say(listError, '');
      await load();
      say(filterError, '');
      range.focus?.();
    } catch (e) {
      if (e.status === 412) showConflict(e); else say(jsonError, e.message);
      remove.disabled = false;
      remove.textContent = 'Delete';
    }
  });

  reloadButton.addEventListener('click', () => open(state.open.id));
  close.addEventListener('click', () => { showEditor(false); state.open = null; });
  newButton.addEventListener('click', () => { show(null); textarea.focus(); });

  load();
  return () => { stopped = true; };
}
