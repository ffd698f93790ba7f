// Direct push (APNs, FCM): every device with its deliveries, failures and
// last error, and the pushes by status with their attempts and last answer.
import { h, clear, alertBox, say, field } from './dom.js';
import { get, qs } from './api.js';

export function mount(main) {
  let stopped = false;
  const error = alertBox('error', { id: 'push-error' });
  const devices = h('tbody');
  const statusFilter = h('select', { id: 'push-status' },
    [['', 'all'], ['pending', 'pending'], ['delivered', 'delivered'], ['dead', 'dead'], ['dropped', 'dropped']].map(([v, t]) => h('option', { value: v }, t)));
  const refreshButton = h('button', { type: 'button', id: 'refresh-push' }, 'Refresh');
  const pushes = h('tbody');

  main.append(h('h1', {}, 'Push'), error,
    h('h2', {}, 'Devices'),
    h('div', { class: 'table-wrap' }, h('table', { id: 'push-devices-table' },
      h('thead', {}, h('tr', {}, ['Token', 'User', 'Platform', 'Environment', 'Sync', 'Deliveries', 'Failures', 'Last error', 'Last push']
        .map((t) => h('th', { scope: 'col' }, t)))), devices)),
    h('h2', {}, 'Pushes'),
    h('div', { class: 'toolbar' }, field('Status', statusFilter), refreshButton),
    h('div', { class: 'table-wrap' }, h('table', { id: 'push-deliveries-table' },
      h('thead', {}, h('tr', {}, ['Id', 'Device', 'Kind', 'Status', 'Attempts', 'Last result'].map((t) => h('th', { scope: 'col' }, t)))), pushes)));


  async function load() {
    try {
      const list = await get('/admin/push/devices' + qs({ limit: 200 }));
      if (stopped) return;
      clear(devices, list.length ? list.map((d) => h('tr', { 'data-device': d.tokenId },
        h('td', { class: 'mono', title: d.tokenId }, d.token), h('td', {}, d.userId), h('td', {}, d.platform),
        h('td', {}, d.environment ?? '–'), h('td', {}, d.sync ? 'yes' : 'no'), h('td', {}, d.deliveries), h('td', {}, d.failures),
        h('td', { class: 'cell' }, d.lastError ?? ''), h('td', {}, d.lastPushAt ?? '–')))
        : h('tr', { class: 'empty' }, h('td', { colspan: 9, class: 'muted', id: 'push-devices-empty' },
          'No devices yet. A device appears here once the app registers its APNs or FCM token (POST /push/devices, signed in); '
          + 'pushes to it are listed below.')));
      const rows = await get('/admin/push/deliveries' + qs({ status: statusFilter.value, limit: 100 }));
      if (stopped) return;
      clear(pushes, rows.length ? rows.map((p) => h('tr', { 'data-push': p.id, 'data-status': p.status },
        h('td', {}, p.id), h('td', { class: 'mono', title: p.tokenId }, p.token), h('td', {}, p.kind), h('td', {}, p.status),
        h('td', {}, p.attempts), h('td', { class: 'cell' }, p.lastError ?? p.lastStatus ?? '–')))
        : h('tr', { class: 'empty' }, h('td', { colspan: 6, class: 'muted', id: 'push-deliveries-empty' }, statusFilter.value
          ? `No ${statusFilter.value} pushes. Choose \u201call\u201d to see every push.`
          : 'No pushes yet. Pushes sent to registered devices (from hooks, scripts or silent sync) are listed here with their attempts.')));
      say(error, '');
    } catch (e) { if (!stopped) say(error, 'Cannot list push devices: ' + e.message); }
  }

  statusFilter.addEventListener('change', load);
  refreshButton.addEventListener('click', load);
  load();
  return () => { stopped = true; };
}
