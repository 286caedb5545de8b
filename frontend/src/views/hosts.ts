// A multi-host run, all hosts side by side: step time, busy share and worst finding per host, the
// slowest host and the stragglers named; a click opens that host.

import {el} from '../dom';
import {fmtDuration, fmtPct} from '../format';
import {AcrossHosts, Report} from '../schema.gen';
import {card, chip, PROBLEMS} from './common';

export function hostsView(
  reports: Report[],
  across: AcrossHosts | undefined,
  open: (host: string) => void,
): HTMLElement {
  const c = card('all-hosts', 'All hosts of this run');
  const stragglers = new Set(across?.stragglers ?? []);
  if (across)
    c.appendChild(
      el(
        'p',
        {id: 'stragglers'},
        `Slowest host: ${across.slowest_host}. `,
        stragglers.size
          ? `Stragglers (mean step over 5% slower than the fastest host): ${[...stragglers].join(', ')}.`
          : 'No straggler: every host within 5% of the fastest.',
      ),
    );
  const t = el(
    'table',
    {class: 'hosts'},
    el(
      'tr',
      {},
      el('th', {}, 'Host'),
      el('th', {class: 'num'}, 'Step'),
      el('th', {class: 'num'}, 'GPU busy'),
      el('th', {}, 'Worst finding'),
    ),
  );
  for (const r of reports) {
    // the most severe problem (critical before warning), not the first listed: checks are ranked by saving
    const worst = PROBLEMS.slice(0, 2)
      .map((s) => r.checks.find((x) => x.status === s))
      .find((x) => x !== undefined);
    const row = el(
      'tr',
      {class: 'host-row', tabindex: 0, 'data-host': r.host, role: 'link'},
      el('td', {}, r.host, stragglers.has(r.host) ? el('span', {class: 'badge'}, 'straggler') : null),
      el('td', {class: 'num'}, fmtDuration(r.steps?.mean_ms)),
      el('td', {class: 'num'}, fmtPct(r.headline?.device_busy_pct)),
      el(
        'td',
        {},
        worst ? chip(worst.status) : chip(r.failure ? 'error' : 'pass'),
        ' ',
        worst?.title ?? r.errors[0] ?? 'no problem found',
      ),
    );
    row.addEventListener('click', () => open(r.host));
    row.addEventListener('keydown', (e) => {
      if ((e as KeyboardEvent).key === 'Enter') open(r.host);
    });
    t.appendChild(row);
  }
  c.appendChild(t);
  return c;
}
