// The daemon's own backups (backups.dir): the state of the last one, every
// backup with its state, time and size, and "Back up now" (POST
// /admin/backups, then the listing is read again until it is done).
import { h, clear, alertBox, say, fmt } from './dom.js';
import { api, get } from './api.js';

const STATES = {
  verified: 'verified: complete and its checksums match',
  incomplete: 'incomplete: not finished (interrupted, or still being written)',
  invalid: 'invalid: it does not verify',
};

export function mount(main) {
  let stopped = false;
  let timer = null;
  let waitingFor = null; // names present before "Back up now", while it runs
  const error = alertBox('error', { id: 'backups-error' });
  const status = alertBox('ok', { id: 'backups-status' });
  const settings = h('p', { class: 'muted', id: 'backups-settings' });
  const last = h('section', { class: 'panel', id: 'last-backup', 'aria-labelledby': 'last-backup-title' });
  const now = h('button', { type: 'button', class: 'primary', id: 'backup-now' }, 'Back up now');
  const body = h('tbody');
  main.append(h('h1', {}, 'Backups'),
    h('p', { class: 'muted' }, 'Consistent copies of the database and the file store that roostd takes while it serves, '
      + 'each verified after it is written. Restore one with roostd restore (docs/OPERATIONS.md).'),
    settings, error, status, last,
    h('div', { class: 'toolbar' }, now),
    h('div', { class: 'table-wrap' }, h('table', { id: 'backups-table' },
      h('thead', {}, h('tr', {}, ['Name', 'State', 'Taken', 'Size', 'Files', 'Took', 'Problem'].map((t) => h('th', { scope: 'col' }, t)))),
      body)));

  function describeLast(b) {
    if (!b) {
      return [h('h2', { id: 'last-backup-title' }, 'Last backup'),
        h('p', { id: 'last-backup-state', 'data-state': 'none' }, 'None yet.')];
    }
    return [h('h2', { id: 'last-backup-title' }, 'Last backup'),
      h('p', { id: 'last-backup-state', 'data-state': b.state, class: 'state-' + b.state },
        `${b.name} \u00b7 ${STATES[b.state] || b.state}`),
      h('p', { class: 'muted' }, [b.createdAt ? 'Taken ' + new Date(b.createdAt).toLocaleString() : 'Time unknown',
        fmt.bytes(b.bytes), b.files + ' file(s)', b.seconds != null ? 'took ' + fmt.number(b.seconds) + ' s' : null]
        .filter(Boolean).join(' \u00b7 ')),
      b.problem ? h('p', { class: 'alert error' }, b.problem) : null];
  }

  async function load() {
    clearTimeout(timer);
    try {
      const data = await get('/admin/backups');
      if (stopped) return;
      say(error, '');
      const list = data.backups.slice().reverse(); // newest first
      if (data.unavailable) {
        // Not a failure: this daemon is not set up to take backups. Say how, not "nothing here".
        settings.textContent = '';
        clear(last, h('h2', { id: 'last-backup-title' }, 'Backups are off'),
          h('p', { id: 'backups-off' }, data.unavailable),
          data.embeddedDatabase ? h('p', { class: 'muted', id: 'backups-how' }, 'In roost.yaml: backups: { dir: /var/backups/roost, every: 24h, keep: 7 }, '
            + 'then restart roostd. roostd backup --to DIR takes one from the command line.') : null);
        now.disabled = true;
        now.title = data.unavailable;
      } else {
        settings.textContent = `Kept in ${data.dir}` + (data.every ? `, one every ${fmt.number(data.every / 3600)} h` : ', on request only (no backups.every)')
          + (data.keep ? `, the newest ${data.keep} kept.` : ', all kept.');
        clear(last, describeLast(list[0]));
        now.disabled = data.running;
        now.title = '';
        now.textContent = data.running ? 'Backing up\u2026' : 'Back up now';
      }
      clear(body, list.length ? list.map((b) => h('tr', { 'data-backup': b.name, 'data-state': b.state },
        h('td', { class: 'mono' }, b.name), h('td', { class: 'state-' + b.state }, b.state),
        h('td', {}, b.createdAt || '\u2013'), h('td', {}, fmt.bytes(b.bytes)), h('td', {}, b.files),
        h('td', {}, b.seconds != null ? fmt.number(b.seconds) + ' s' : '\u2013'), h('td', { class: 'cell' }, b.problem || '')))
        : h('tr', { class: 'empty' }, h('td', { colspan: 7, class: 'muted', id: 'backups-empty' }, data.unavailable
          ? (data.embeddedDatabase ? 'No backups: this daemon takes none until backups.dir is set.'
            : 'No backups: roostd does not back up data kept in PostgreSQL.')
          : `No backups in ${data.dir} yet. Take the first with \u201cBack up now\u201d` + (data.every ? ', or wait for the schedule.' : '.'))));
      if (waitingFor && !data.running) {
        const made = list.find((b) => !waitingFor.has(b.name));
        waitingFor = null;
        if (made) say(status, `Backup ${made.name} finished: ${made.state}.`, made.state === 'verified' ? 'ok' : 'warn');
        else say(status, 'The backup ended without a new backup; the daemon\u2019s log says why.', 'warn');
      }
      if (data.running) timer = setTimeout(load, 1000);
    } catch (e) {
      if (!stopped) say(error, 'Cannot list the backups: ' + e.message);
    }
  }

  now.addEventListener('click', async () => {
    now.disabled = true;
    say(error, '');
    try {
      const before = await get('/admin/backups');
      waitingFor = new Set(before.backups.map((b) => b.name));
      await api('POST', '/admin/backups');
      say(status, 'Backing up\u2026', 'ok');
    } catch (e) {
      waitingFor = null;
      say(status, '');
      say(error, 'Cannot take a backup: ' + e.message);
    }
    load();
  });

  load();
  return () => { stopped = true; clearTimeout(timer); };
}
