// The collection editor's simple field list: rows of (name, type, required)
// for the common types, turned into a JSON Schema and read back from one.
// Whatever the list cannot express stays in the schema's JSON untouched.
import { h, clear } from './dom.js';

/** The types the field list offers, each with the subschema it writes. */
export const FIELD_TYPES = [
  ['string', 'string', () => ({ type: 'string' })],
  ['number', 'number', () => ({ type: 'number' })],
  ['integer', 'integer', () => ({ type: 'integer' })],
  ['boolean', 'boolean', () => ({ type: 'boolean' })],
  ['date-time', 'date and time', () => ({ type: 'string', format: 'date-time' })],
  ['geo-point', 'geo point [lng, lat]', () => ({ format: 'geo-point' })],
  ['reference', 'reference to…', (target) => ({ type: 'string', format: 'reference', 'x-roost-collection': target || '' })],
];
const OTHER = 'other';

/** The field-list type of a property's subschema, or 'other' (edited as JSON only). */
export function typeOf(sub) {
  if (!sub || typeof sub !== 'object' || Array.isArray(sub)) return OTHER;
  if (sub.format === 'geo-point') return 'geo-point';
  if (sub.format === 'reference') return 'reference';
  if (sub.type === 'string' && sub.format === 'date-time') return 'date-time';
  if (['string', 'number', 'integer', 'boolean'].includes(sub.type) && !sub.format) return sub.type;
  return OTHER;
}

/** Fields read from a schema: [{name, type, required, target}]; null when it has no properties to list. */
export function fieldsOf(schema) {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return null;
  const props = schema.properties && typeof schema.properties === 'object' ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  return Object.entries(props).map(([name, sub]) => ({
    name, type: typeOf(sub), required: required.includes(name), target: (sub && sub['x-roost-collection']) || '',
  }));
}

/**
 * The schema with its `properties` and `required` set from `fields`. A
 * property whose type did not change keeps its subschema (its minLength, its
 * description…); the schema's other keywords are kept as they are.
 */
export function schemaWith(current, fields) {
  const base = current && typeof current === 'object' && !Array.isArray(current) ? { ...current } : { type: 'object' };
  const before = base.properties && typeof base.properties === 'object' ? base.properties : {};
  const properties = {};
  for (const f of fields) {
    if (!f.name) continue;
    const kept = before[f.name];
    if (f.type === OTHER) { properties[f.name] = kept === undefined ? {} : kept; continue; }
    const make = FIELD_TYPES.find(([t]) => t === f.type)[2];
    properties[f.name] = typeOf(kept) === f.type && (f.type !== 'reference' || kept['x-roost-collection'] === f.target)
      ? kept : make(f.target);
  }
  base.properties = properties;
  const required = fields.filter((f) => f.name && f.required).map((f) => f.name);
  if (required.length) base.required = required; else delete base.required;
  if (!base.type) base.type = 'object';
  return base;
}

/**
 * The field list's UI: a table of rows and an "Add field" button. Calls
 * `changed(fields)` after every edit by the user; `set(fields)` fills it.
 */
export function fieldList(changed, collections) {
  const body = h('tbody');
  const add = h('button', { type: 'button', id: 'add-field' }, 'Add field');
  const table = h('div', { class: 'table-wrap' }, h('table', { id: 'schema-fields', class: 'compact' },
    h('caption', { class: 'hidden' }, 'Schema fields'),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Field'), h('th', { scope: 'col' }, 'Type'),
      h('th', { scope: 'col' }, 'Required'), h('th', { scope: 'col' }, 'Collection (references)'), h('th', { scope: 'col' }, h('span', { class: 'hidden' }, 'Remove')))),
    body));
  const root = h('div', { class: 'field-list' }, table, h('div', { class: 'actions' }, add));
  table.classList.add('hidden');
  let disabled = false;
  // The table shows only once there is a field to show.
  const showTable = () => table.classList.toggle('hidden', body.children.length === 0);

  function row(f) {
    const n = body.children.length;
    const name = h('input', { type: 'text', class: 'f-name', value: f.name, 'aria-label': `Field ${n + 1} name`, autocomplete: 'off', spellcheck: 'false' });
    const type = h('select', { class: 'f-type', 'aria-label': `Field ${n + 1} type` },
      FIELD_TYPES.map(([t, label]) => h('option', { value: t, selected: f.type === t }, label)),
      f.type === OTHER ? h('option', { value: OTHER, selected: true }, 'other (edit the JSON)') : null);
    const required = h('input', { type: 'checkbox', class: 'f-required', checked: f.required, 'aria-label': `Field ${n + 1} required` });
    const target = h('input', { type: 'text', class: 'f-target', value: f.target || '', list: collections.id, 'aria-label': `Field ${n + 1} referenced collection`, autocomplete: 'off' });
    const remove = h('button', { type: 'button', class: 'danger f-remove', 'aria-label': `Remove field ${n + 1}` }, '×');
    const tr = h('tr', { 'data-field': f.name }, h('td', {}, name), h('td', {}, type), h('td', {}, required), h('td', {}, target), h('td', {}, remove));
    const sync = () => { tr.setAttribute('data-field', name.value.trim()); target.classList.toggle('hidden', type.value !== 'reference'); };
    sync();
    for (const control of [name, type, required, target]) control.addEventListener('input', () => { sync(); changed(get()); });
    type.addEventListener('change', () => { sync(); changed(get()); });
    required.addEventListener('change', () => changed(get()));
    remove.addEventListener('click', () => { tr.remove(); showTable(); changed(get()); });
    for (const control of [name, type, required, target, remove]) control.disabled = disabled;
    return tr;
  }

  function get() {
    return [...body.querySelectorAll('tr')].map((tr) => ({
      name: tr.querySelector('.f-name').value.trim(), type: tr.querySelector('.f-type').value,
      required: tr.querySelector('.f-required').checked, target: tr.querySelector('.f-target').value.trim(),
    }));
  }

  add.addEventListener('click', () => {
    const tr = row({ name: '', type: 'string', required: false, target: '' });
    body.append(tr);
    showTable();
    tr.querySelector('.f-name').focus();
  });

  return {
    element: root,
    get,
    set(fields) { clear(body, (fields || []).map(row)); showTable(); },
    disable(on) { disabled = on; add.disabled = on; for (const c of root.querySelectorAll('input, select, button')) c.disabled = on; },
  };
}
