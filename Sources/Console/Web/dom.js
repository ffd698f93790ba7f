// Small DOM helpers: elements are built with createElement (never from
// HTML strings), so every value is text and the CSP needs no inline code.

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  setAttributes(el, attrs);
  append(el, children);
  return el;
}

const SVG = 'http://www.w3.org/2000/svg';

export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  setAttributes(el, attrs);
  append(el, children);
  return el;
}

function setAttributes(el, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'class') el.setAttribute('class', value);
    else if (key === 'text') el.textContent = value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

export function clear(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** A labelled form control: `<div class="field"><label for=id>…</label>control</div>`. */
export function field(label, control, extraClass) {
  if (!control.id) control.id = 'f-' + Math.random().toString(36).slice(2, 9);
  return h('div', { class: 'field' + (extraClass ? ' ' + extraClass : '') }, h('label', { for: control.id }, label), control);
}

/** A live region for errors or notices. */
export function alertBox(kind = 'error', attrs = {}) {
  return h('div', { class: 'alert ' + kind, role: kind === 'error' ? 'alert' : 'status', ...attrs });
}

export function say(box, text, kind) {
  if (kind) box.className = 'alert ' + kind;
  box.textContent = text || '';
}

export const fmt = {
  number(v, digits = 1) {
    if (v === null || v === undefined || Number.isNaN(v)) return '–';
    if (Number.isInteger(v)) return v.toLocaleString('en-US');
    return v.toLocaleString('en-US', { maximumFractionDigits: digits });
  },
  ms(v) {
    if (v === null || v === undefined) return '–';
    return v < 1 ? v.toFixed(3) + ' ms' : v < 100 ? v.toFixed(1) + ' ms' : Math.round(v) + ' ms';
  },
  bytes(n) {
    if (n === null || n === undefined) return '–';
    const units = ['B', 'KB', 'MB', 'GB', 'TB'];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i === 0 ? n : n.toFixed(1)) + ' ' + units[i];
  },
  json(value) {
    if (value === undefined) return '';
    return typeof value === 'string' ? value : JSON.stringify(value);
  },
};

/** A promise that never rejects with an AbortError left unhandled. */
export function debounce(fn, ms) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}
