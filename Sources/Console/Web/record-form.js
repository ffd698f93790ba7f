// A form made from a collection's JSON Schema, beside the records page's
// JSON editor: one control per top-level property of a simple type (string,
// number, integer, boolean, enum, date-time). Each edit is written into the
// JSON; a SchemaViolation's pointers are shown at their fields.
import { h, clear, fmt } from './dom.js';

/** The control kind for a property's subschema, or null (edited in the JSON only). */
export function kindOf(sub) {
  if (!sub || typeof sub !== 'object') return null;
  if (Array.isArray(sub.enum) && sub.enum.length && sub.enum.length <= 200) return 'enum';
  if (sub.type === 'string') return sub.format === 'date-time' ? 'date-time' : sub.format ? null : 'string';
  if (sub.type === 'number' || sub.type === 'integer' || sub.type === 'boolean') return sub.type;
  return null;
}

/** The top-level field a JSON Pointer (RFC 6901) points into: "/tags/0" → "tags". */
export function fieldOfPointer(pointer) {
  if (typeof pointer !== 'string' || !pointer.startsWith('/')) return null;
  return pointer.slice(1).split('/')[0].replace(/~1/g, '/').replace(/~0/g, '~');
}

// date-time values are edited in UTC: "2026-11-28T10:00:00Z" ↔ "2026-11-28T10:00:00".
function toLocalInput(value) {
  const t = typeof value === 'string' ? Date.parse(value) : NaN;
  return Number.isNaN(t) ? '' : new Date(t).toISOString().slice(0, 19);
}
function fromLocalInput(text) { return text.length === 16 ? text + ':00Z' : text + 'Z'; }

/**
 * `edited(name, value)` is called after the user changes a control
 * (`undefined`: the field is left out).
 */
export function recordForm(edited) {
  const grid = h('div', { class: 'schema-form' });
  const element = h('fieldset', { class: 'schema-fields hidden', id: 'record-form' },
    h('legend', {}, 'Fields from the schema'), grid);
  let controls = new Map(); // name → { control, kind, error, sub }

  function valueOf(c) {
    const v = c.control.value;
    if (v === '') return undefined;
    switch (c.kind) {
      case 'number': case 'integer': return Number(v);
      case 'boolean': return v === 'true';
      case 'enum': return JSON.parse(v);
      case 'date-time': return fromLocalInput(v);
      default: return v;
    }
  }

  function control(name, kind, sub) {
    const id = 'form-' + name.replace(/[^A-Za-z0-9_-]/g, '_');
    switch (kind) {
      case 'boolean':
        return h('select', { id, 'data-field': name }, h('option', { value: '' }, '—'), h('option', { value: 'true' }, 'true'), h('option', { value: 'false' }, 'false'));
      case 'enum':
        return h('select', { id, 'data-field': name }, h('option', { value: '' }, '—'), sub.enum.map((v) => h('option', { value: JSON.stringify(v) }, fmt.json(v))));
      case 'number': case 'integer':
        return h('input', { id, 'data-field': name, type: 'number', step: kind === 'integer' ? '1' : 'any',
          min: sub.minimum, max: sub.maximum, inputmode: kind === 'integer' ? 'numeric' : 'decimal' });
      case 'date-time':
        return h('input', { id, 'data-field': name, type: 'datetime-local', step: '1' });
      default:
        return h('input', { id, 'data-field': name, type: 'text', autocomplete: 'off', maxlength: sub.maxLength });
    }
  }

  return {
    element,
    /** Builds the controls for `schema` (none: the form hides). */
    setSchema(schema) {
      controls = new Map();
      const props = schema && typeof schema.properties === 'object' && schema.properties ? schema.properties : {};
      const required = new Set(Array.isArray(schema && schema.required) ? schema.required : []);
      const items = [];
      for (const [name, sub] of Object.entries(props)) {
        const kind = kindOf(sub);
        if (!kind || name.startsWith('_')) continue;
        const c = { control: control(name, kind, sub), kind, sub, error: h('span', { class: 'field-error', id: 'form-error-' + name.replace(/[^A-Za-z0-9_-]/g, '_') }) };
        c.control.setAttribute('aria-describedby', c.error.id);
        const label = name + (required.has(name) ? ' *' : '') + (kind === 'date-time' ? ' (UTC)' : '');
        const onEdit = () => { c.error.textContent = ''; c.control.removeAttribute('aria-invalid'); edited(name, valueOf(c)); };
        c.control.addEventListener(c.control.tagName === 'SELECT' ? 'change' : 'input', onEdit);
        controls.set(name, c);
        items.push(h('div', { class: 'field', 'data-form-field': name }, h('label', { for: c.control.id }, label), c.control, c.error));
      }
      clear(grid, items);
      element.classList.toggle('hidden', items.length === 0);
    },
    /** Shows `doc`'s values in the controls (a value of the wrong type shows empty). */
    fill(doc) {
      for (const [name, c] of controls) {
        const v = doc ? doc[name] : undefined;
        if (document.activeElement === c.control) continue; // never rewrite what the user is typing
        switch (c.kind) {
          case 'boolean': c.control.value = typeof v === 'boolean' ? String(v) : ''; break;
          case 'enum': c.control.value = v === undefined ? '' : JSON.stringify(v); if (c.control.selectedIndex < 0) c.control.value = ''; break;
          case 'number': case 'integer': c.control.value = typeof v === 'number' ? String(v) : ''; break;
          case 'date-time': c.control.value = toLocalInput(v); break;
          default: c.control.value = typeof v === 'string' ? v : '';
        }
      }
    },
    clearErrors() {
      for (const c of controls.values()) { c.error.textContent = ''; c.control.removeAttribute('aria-invalid'); }
    },
    /** Shows each violation at its field; returns those with no field here. */
    showViolations(violations) {
      const rest = [];
      for (const v of violations || []) {
        const c = controls.get(fieldOfPointer(v.pointer));
        if (!c) { rest.push(v); continue; }
        c.error.textContent = c.error.textContent ? c.error.textContent + '; ' + v.message : v.message;
        c.control.setAttribute('aria-invalid', 'true');
      }
      return rest;
    },
  };
}
