// The console's shell: sign-in, navigation, and one page at a time.
import { h, clear, alertBox, say } from './dom.js';
import { api, token, onRefused } from './api.js';
import * as dashboard from './page-dashboard.js';
import * as collections from './page-collections.js';
import * as records from './page-records.js';
import * as files from './page-files.js';
import * as users from './page-users.js';
import * as roles from './page-roles.js';
import * as webhooks from './page-webhooks.js';
import * as push from './page-push.js';
import * as hooks from './page-hooks.js';
import * as logs from './page-logs.js';
import * as backups from './page-backups.js';
import { onHealth, isDown } from './health.js';

const PAGES = [
  ['dashboard', 'Dashboard', dashboard],
  ['collections', 'Collections', collections],
  ['records', 'Records', records],
  ['files', 'Files', files],
  ['users', 'Users', users],
  ['roles', 'Roles', roles],
  ['webhooks', 'Webhooks', webhooks],
  ['push', 'Push', push],
  ['hooks', 'Hooks', hooks],
  ['backups', 'Backups', backups],
  ['logs', 'Logs', logs],
];

// Pages left as they are when roostd answers again (the records editor may hold unsaved edits);
// every other page is mounted afresh, so nothing stays half-loaded.
const KEEP_ON_RECONNECT = new Set(['records']);

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

// First run: the one-time link roostd printed (#setup=<code>) creates the
// admin credential, which is shown once here and never stored by the server.
function setup(code) {
  stopPage();
  shell = null;
  token.clear();
  history.replaceState(null, '', location.pathname); // the code leaves the address bar and the history
  const error = alertBox('error', { id: 'setup-error' });
  const button = h('button', { class: 'primary', type: 'submit', id: 'setup-button' }, 'Create the admin credential');
  const form = h('form', { class: 'signin', id: 'setup', 'aria-labelledby': 'setup-title' },
    h('h1', { id: 'setup-title' }, 'Set up Roost'),
    h('p', { class: 'muted' }, 'This one-time link creates the daemon\u2019s admin credential: the token that signs in to this console and calls the admin API. It is shown to you once; roostd keeps only its hash.'),
    button, error);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    button.disabled = true;
    say(error, '');
    try {
      const { data } = await api('POST', '/admin/setup', { json: { code } });
      showCredential(data.token);
    } catch (e) {
      say(error, e.message);
      button.disabled = e.status === 409 || e.status === 410;
    }
  });
  clear(root, h('main', { id: 'main' }, form));
  button.focus();
}

function showCredential(value) {
  const field = h('input', { id: 'new-token', type: 'text', readonly: true, value, spellcheck: 'false', autocomplete: 'off' });
  const go = h('button', { class: 'primary', type: 'button', id: 'continue-button' }, 'Continue to the console');
  go.addEventListener('click', () => { token.set(value); location.hash = '#/dashboard'; route(); });
  clear(root, h('main', { id: 'main' }, h('div', { class: 'signin', id: 'setup-done' },
    h('h1', {}, 'Admin credential created'),
    alertBox('warn', { id: 'setup-warning', text: 'Copy it now into a password manager: it is shown only this once.' }),
    h('label', { for: 'new-token' }, 'Admin credential'), field, go)));
  field.select();
}

/** Says on the sign-in page when the daemon has no admin credential yet. */
async function noticeMissingCredential(box) {
  try {
    const { data } = await api('GET', '/admin/setup');
    if (!data.adminCredential) {
      say(box, 'This daemon has no admin credential yet. Open the one-time console link roostd printed when it started '
        + '(on its terminal, or journalctl -u roostd), or set admin_token in its configuration and restart it.', 'warn');
    }
  } catch { /* an older daemon: nothing to say */ }
}

function signIn(message) {
  stopPage();
  shell = null;
  token.clear();
  const input = h('input', { id: 'token', name: 'token', type: 'password', autocomplete: 'off', required: true, spellcheck: 'false' });
  const error = alertBox('error', { id: 'signin-error' });
  const notice = alertBox('warn', { id: 'signin-notice' });
  const button = h('button', { class: 'primary', type: 'submit', id: 'signin-button' }, 'Sign in');
  const form = h('form', { class: 'signin', id: 'signin', 'aria-labelledby': 'signin-title' },
    h('h1', { id: 'signin-title' }, 'Roost console'),
    h('p', { class: 'muted' }, 'Sign in with the daemon\u2019s admin credential: admin_token in its configuration, or the one created with the first-run link.'),
    h('label', { for: 'token' }, 'Admin token'), input, button, error, notice);
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
      say(error, e.status === 403
        ? 'This is a user\u2019s session token; the console needs the admin credential.'
        : e.status === 401 ? 'That token was refused.' : 'Cannot sign in: ' + e.message);
      button.disabled = false;
      input.focus();
    }
  });
  clear(root, h('main', { id: 'main' }, form));
  if (message) say(error, message);
  noticeMissingCredential(notice);
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
  if (location.hash.startsWith('#setup=')) return setup(decodeURIComponent(location.hash.slice(7)));
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
  markUnloaded();
  shell.main.focus({ preventScroll: true });
}

// roostd not answering: a banner above everything with the next retry, no
// "Loading…" left waiting; once it answers, the banner goes and the page reloads.
const banner = h('div', { id: 'offline-banner', class: 'offline hidden', role: 'alert' });
document.body.prepend(banner);
let countdown = null;
onHealth(({ down, retryAt, probing }) => {
  clearInterval(countdown);
  if (!down) {
    const wasShown = !banner.classList.contains('hidden');
    banner.classList.add('hidden');
    banner.textContent = '';
    if (wasShown && shell && current && !KEEP_ON_RECONNECT.has(current.name)) route();
    return;
  }
  const show = () => {
    const seconds = Math.max(0, Math.ceil((retryAt - Date.now()) / 1000));
    banner.textContent = probing || seconds === 0 ? 'roostd is not answering (retrying now…)'
      : `roostd is not answering (retrying in ${seconds} s)`;
  };
  show();
  banner.classList.remove('hidden');
  countdown = setInterval(show, 1000);
  markUnloaded();
});

/** While roostd does not answer, no "Loading\u2026" waits on the page. */
function markUnloaded() {
  if (!shell || !isDown()) return;
  for (const el of shell.main.querySelectorAll('td, p, span')) {
    if (el.childElementCount === 0 && el.textContent.trim() === 'Loading\u2026') el.textContent = 'Not loaded: roostd is not answering.';
  }
}

// While signed in, a refused token (revoked, rotated) returns to the sign-in
// page; on the sign-in page the form itself reports it.
onRefused(() => { if (shell) signIn('The server refused the token; sign in again.'); });
window.addEventListener('hashchange', route);
route();
