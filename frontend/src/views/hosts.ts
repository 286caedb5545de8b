// A run's hosts side by side, read as a job: each rank's step, compute, collectives (and the part not
// overlapped with compute) and worst finding, the straggler named, the job checks that fired; a click
// opens that host.

import {el} from '../dom';
import {fmtDuration, fmtPct} from '../format';
import {AcrossHosts, HostSummary} from '../schema.gen';
import {card, chip, PROBLEMS} from './common';

/** The reports the table lists: a job's ranks in its picked cycle (another cycle of a rank is not its
 * peer), and any file that could not be read; every report when the run is not a job. */
export function shownReports(reports: HostSummary[], across: AcrossHosts | undefined): HostSummary[] {
  const picked = new Set((across?.ranks ?? []).map((r) => r.host));
  return picked.size ? reports.filter((r) => picked.has(r.host) || r.failure) : reports;
}

export function hostsView(
  reports: HostSummary[],
  across: AcrossHosts | undefined,
  open: (host: string) => void,
): HTMLElement {
  const c = card('all-hosts', 'All hosts of this run');
  const stragglers = new Set(across?.stragglers ?? []);
  const ranks = new Map((across?.ranks ?? []).map((r) => [r.host, r]));
  if (across) {
    const label = (h: string) => ranks.get(h)?.label ?? h;
    const captured = across.world_size
      ? `${across.ranks_captured} of ${across.world_size} ranks`
      : `${across.ranks_captured} ranks`;
    const cycles = across.cycles > 1 ? `, ${across.cycles} profiling cycles (cycle ${across.cycle + 1} compared)` : '';
    c.appendChild(
      el(
        'p',
        {id: 'stragglers'},
        `Job ${across.run}: ${captured}${cycles}. `,
        stragglers.size
          ? `Straggler (its own work an outlier while the other ranks wait in collectives): ${[...stragglers].map(label).join(', ')}.`
          : 'No straggler: no rank works longer while the others wait in collectives.',
      ),
    );
    const fired = across.checks.filter((x) => x.status !== 'pass');
    if (fired.length)
      c.appendChild(
        el(
          'ul',
          {id: 'job-checks'},
          ...fired.map((x) =>
            el('li', {'data-check': x.id}, chip(x.status), ' ', el('b', {}, x.title), '. ', x.summary),
          ),
        ),
      );
  }
  const t = el(
    'table',
    {class: 'hosts'},
    el(
      'tr',
      {},
      el('th', {}, 'Host'),
      el('th', {class: 'num'}, 'Step'),
      el('th', {class: 'num'}, 'GPU busy'),
      el('th', {class: 'num'}, 'Compute'),
      el('th', {class: 'num'}, 'Collectives (exposed)'),
      el('th', {}, 'Worst finding'),
    ),
  );
  for (const r of shownReports(reports, across)) {
    // the most severe problem (critical before warning), not the first listed: checks are ranked by saving
    const worst = PROBLEMS.slice(0, 2)
      .map((s) => r.checks.find((x) => x.status === s))
      .find((x) => x !== undefined);
    const m = r.rank_measures;
    const row = el(
      'tr',
      {class: 'host-row', tabindex: 0, 'data-host': r.host, role: 'link'},
      el(
        'td',
        {},
        ranks.get(r.host)?.label ?? r.host,
        stragglers.has(r.host) ? el('span', {class: 'badge'}, 'straggler') : null,
      ),
      el('td', {class: 'num'}, fmtDuration(r.steps?.mean_ms)),
      el('td', {class: 'num'}, fmtPct(r.headline?.device_busy_pct)),
      el('td', {class: 'num'}, fmtDuration(m?.compute_ms)),
      el(
        'td',
        {class: 'num'},
        m?.collective_ms != null ? `${fmtDuration(m.collective_ms)} (${fmtDuration(m.exposed_collective_ms)})` : '—',
      ),
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
