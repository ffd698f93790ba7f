// The console's app.js: the text between the #""" lines is the file, served as is.
extension ConsoleAssets {
    static let appJS = #"""
// The console's shell: sign-in, navigation, and one page at a time.
import { h, clear, alertBox, say } from './dom.js';
import { api, token, onRefused } from './api.js';
import * as dashboard from './page-dashboard.js';
import * as collections from './page-collections.js';
import * as records from './page-records.js';
import * as files from './page-files.js';
import * as users from './page-users.js';
import * as webhooks from './page-webhooks.js';
import * as push from './page-push.js';
import * as hooks from './page-hooks.js';
import * as logs from './page-logs.js';

const PAGES = [
  ['dashboard', 'Dashboard', dashboard],
  ['collections', 'Collections', collections],
  ['records', 'Records', records],
  ['files', 'Files', files],
  ['users', 'Users', users],
  ['webhooks', 'Webhooks', webhooks],
  ['push', 'Push', push],
  ['hooks', 'Hooks', hooks],
  ['logs', 'Logs', logs],
];

const root = document.getElementById('app');
const assets = new URL('.', import.meta.url).pathname;
let current = null; // { name, cleanup, main, links }
let shell = null;

function stopPage() {
  if (current && typeof current.cleanup === 'function') {
    try { current.cleanup(); } catch (e) { console.warn(e); }
  }
  current = null;
}

function signIn(message) {
  stopPage();
  shell = null;
  token.clear();
  const input = h('input', { id: 'token', name: 'token', type: 'password', autocomplete: 'off', required: true, spellcheck: 'false' });
  const error = alertBox('error', { id: 'signin-error' });
  const button = h('button', { class: 'primary', type: 'submit', id: 'signin-button' }, 'Sign in');
  const form = h('form', { class: 'signin', id: 'signin', 'aria-labelledby': 'signin-title' },
    h('h1', { id: 'signin-title' }, 'Roost console'),
    h('p', { class: 'muted' }, 'Sign in with the daemon\u2019s admin token (admin_token in its configuration).'),
    h('label', { for: 'token' }, 'Admin token'), input, button, error);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    button.disabled = true;
    say(error, '');
    token.set(input.value.trim());
    try {
      await api('GET', '/admin/stats?after=' + Date.now());
      if (!location.hash || location.hash === '#' || location.hash === '#/') location.hash = '#/dashboard';
      route();
    } catch (e) {
      token.clear();
      say(error, e.status === 401 || e.status === 403 ? 'That token was refused.' : 'Cannot sign in: ' + e.message);
      button.disabled = false;
      input.focus();
    }
  });
  clear(root, h('main', { id: 'main' }, form));
  if (message) say(error, message);
  input.focus();
}

function buildShell() {
  const links = new Map();
  const nav = h('ul', { class: 'nav' }, PAGES.map(([name, title]) => {
    const a = h('a', { href: '#/' + name, 'data-page': name }, title);
    links.set(name, a);
    return h('li', {}, a);
  }));
  const signOut = h('button', { type: 'button', class: 'signout', id: 'signout' }, 'Sign out');
  signOut.addEventListener('click', () => { location.hash = '#/'; signIn(); });
  const main = h('main', { id: 'main', tabindex: '-1' });
  clear(root, h('div', { class: 'shell' },
    h('header', { class: 'sidebar' },
      h('div', { class: 'brand' }, h('img', { src: assets + 'icon.svg', alt: '' }), 'Roost'),
      h('nav', { 'aria-label': 'Console pages' }, nav), signOut),
    main));
  shell = { main, links };
}

function route() {
  if (!token.get()) return signIn();
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const name = parts[0] || 'dashboard';
  const page = PAGES.find(([n]) => n === name) || PAGES[0];
  if (!shell) buildShell();
  stopPage();
  for (const [n, a] of shell.links) {
    if (n === page[0]) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  document.title = page[1] + ' · Roost console';
  clear(shell.main);
  const cleanup = page[2].mount(shell.main, parts.slice(1));
  current = { name: page[0], cleanup };
  shell.main.focus({ preventScroll: true });
}

// While signed in, a refused token (revoked, rotated) returns to the sign-in
// page; on the sign-in page the form itself reports it.
onRefused(() => { if (shell) signIn('The server refused the token; sign in again.'); });
window.addEventListener('hashchange', route);
route();
"""#
}
