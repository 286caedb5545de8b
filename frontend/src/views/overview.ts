// The logdir at a glance, the first view: every run and host with its worst finding, step time, GPU
// busy share and largest saving, sortable, worst first (the largest saving, ties by status; said above
// the table, with no column's arrow); a job's own row (its straggler, exposed communication) above its
// ranks; a click opens the run. Analyses start for every host when this view opens (smallest file
// first) and the table fills in as they finish.

import {errorMessage, getJson} from '../api';
import {el, shown} from '../dom';
import {fmtBytes, fmtDuration, fmtPct} from '../format';
import {RunsResponse} from '../schema.gen';
import {ALL_HOSTS} from '../urlstate';
import {card, chip} from './common';

export interface OverviewRow {
  run: string;
  host: string; // ALL_HOSTS on a job's own row
  job: boolean;
  ranks: number; // on a job's row
  state: string;
  progress: number;
  status: string; // the worst finding's, 'pass', 'error', or the analysis state
  title: string;
  step_ms: number | null;
  busy: number | null;
  saving: number;
  note: boolean; // the worst finding is a capture note (no cost): after every problem with one
}

const RANK: Record<string, number> = {critical: 0, error: 1, warning: 2, info: 3, pass: 4};

export function overviewRows(runs: RunsResponse): OverviewRow[] {
  const rows: OverviewRow[] = [];
  for (const r of runs.runs) {
    if (r.job)
      rows.push({
        run: r.run,
        host: ALL_HOSTS,
        job: true,
        ranks: r.job.ranks ?? r.hosts.length,
        state: 'done',
        progress: 1,
        status: r.job.status,
        title: r.job.title ?? 'no problem found across ranks',
        step_ms: r.job.step_ms,
        busy: r.job.device_busy_pct,
        saving: r.job.top_saving_ms,
        note: r.job.note,
      });
    for (const h of r.hosts) {
      const a = h.analysis;
      const done = a.state === 'done';
      rows.push({
        run: r.run,
        host: h.host,
        job: false,
        ranks: 0,
        state: a.state,
        progress: a.progress,
        status: a.state === 'error' ? 'error' : done ? (a.worst?.status ?? 'pass') : a.state,
        title:
          a.state === 'error' ? (a.error ?? 'could not be read') : done ? (a.worst?.title ?? 'no problem found') : '',
        step_ms: a.step_ms ?? null,
        busy: a.device_busy_pct ?? null,
        saving: a.top_saving_ms ?? 0,
        note: a.worst?.note ?? false,
      });
    }
  }
  return rows;
}

export interface OverviewProgress {
  done: number; // profiles analysed (or failed)
  total: number;
  bytesRead: number; // of the profiles' bytes: whole files done, the running ones by their progress
  bytes: number;
}

/** How far the analysis of every host has come: profiles done of all, bytes read of all. */
export function overviewProgress(runs: RunsResponse): OverviewProgress {
  const out = {done: 0, total: 0, bytesRead: 0, bytes: 0};
  for (const r of runs.runs)
    for (const h of r.hosts) {
      const finished = h.analysis.state === 'done' || h.analysis.state === 'error';
      out.total += 1;
      out.done += finished ? 1 : 0;
      out.bytes += h.size;
      out.bytesRead += finished ? h.size : h.size * Math.min(Math.max(h.analysis.progress || 0, 0), 1);
    }
  return out;
}

/** "Analysing: 3 of 23 profiles done, 1.2 of 80.0 MiB read". */
export function progressText(p: OverviewProgress): string {
  return `Analysing: ${p.done} of ${p.total} profiles done, ${fmtBytes(p.bytesRead)} of ${fmtBytes(p.bytes)} read`;
}

// 'worst': the opening order, worst first (no column's own order: no column shows an arrow for it)
type Key = 'worst' | 'status' | 'run' | 'host' | 'title' | 'step_ms' | 'busy' | 'saving';

/** Worst first: a problem with a cost before a capture note, the larger saving first, then the status
 * (report.problem_order's rule; the run picker's too). */
export function worstFirst(
  a: Pick<OverviewRow, 'note' | 'saving' | 'status'>,
  b: Pick<OverviewRow, 'note' | 'saving' | 'status'>,
): number {
  return Number(a.note) - Number(b.note) || b.saving - a.saving || (RANK[a.status] ?? 5) - (RANK[b.status] ?? 5);
}

export function sortRows(rows: OverviewRow[], key: Key, descending: boolean): OverviewRow[] {
  if (key === 'status') {
    // the most severe status first (critical, error, warning, info, pass, then running), worst first
    // among equals
    const out = [...rows].sort(
      (a, b) =>
        (RANK[a.status] ?? 5) - (RANK[b.status] ?? 5) ||
        worstFirst(a, b) ||
        a.run.localeCompare(b.run) ||
        a.host.localeCompare(b.host),
    );
    return descending ? out.reverse() : out;
  }
  if (key === 'worst') {
    // runs in the order of their worst row; in a run, the job's own row first, then its hosts
    const byRun = new Map<string, OverviewRow[]>();
    for (const r of rows) byRun.set(r.run, [...(byRun.get(r.run) ?? []), r]);
    const groups = [...byRun.values()].map((g) =>
      g.sort((a, b) => Number(b.job) - Number(a.job) || worstFirst(a, b) || a.host.localeCompare(b.host)),
    );
    const best = (g: OverviewRow[]): OverviewRow => [...g].sort(worstFirst)[0];
    groups.sort((a, b) => worstFirst(best(a), best(b)) || a[0].run.localeCompare(b[0].run));
    const out = groups.flat();
    return descending ? out.reverse() : out;
  }
  const value = (r: OverviewRow): number | string => r[key] ?? (typeof r[key] === 'string' ? '' : -Infinity);
  const out = [...rows].sort((a, b) => {
    const x = value(a);
    const y = value(b);
    const c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
    return c || a.run.localeCompare(b.run) || a.host.localeCompare(b.host);
  });
  return descending ? out.reverse() : out;
}

export class OverviewView {
  readonly element: HTMLElement;
  private rows: OverviewRow[] = [];
  private sort: {key: Key; descending: boolean} = {key: 'worst', descending: false};
  private readonly table = el('table', {class: 'overview', id: 'overview-table'});
  private readonly note = el('p', {class: 'muted', id: 'overview-note'});
  private readonly bar = el('div');
  private readonly progress = el(
    'div',
    {class: 'progress', id: 'overview-progress', role: 'progressbar', 'aria-valuemin': '0', 'aria-valuemax': '100'},
    this.bar,
  );
  private stopped = false;

  constructor(private readonly open: (run: string, host: string) => void) {
    this.element = card('overview', 'All runs', this.note, this.progress, this.table);
  }

  stop(): void {
    this.stopped = true;
  }

  async start(): Promise<RunsResponse | null> {
    let last: RunsResponse | null = null;
    while (!this.stopped) {
      const res = await getJson<RunsResponse>('runs', {analyse: 'all'});
      if (this.stopped) break;
      if (res.status !== 200) {
        this.note.textContent = shown(`Could not list runs: ${errorMessage(res.body)}`);
        return null;
      }
      last = res.body;
      this.rows = overviewRows(res.body);
      const pending = this.rows.filter((r) => r.state !== 'done' && r.state !== 'error').length;
      const p = overviewProgress(res.body);
      const pct = p.bytes ? Math.round((100 * p.bytesRead) / p.bytes) : 100;
      this.bar.style.width = `${pct}%`;
      this.progress.setAttribute('aria-valuenow', String(pct));
      this.progress.hidden = !pending;
      this.element.dataset.progress = `${p.done}/${p.total}`;
      this.note.textContent = pending
        ? `${progressText(p)}…`
        : `${this.rows.length} profile${this.rows.length === 1 ? '' : 's'}: click one to open it; click a column to sort.`;
      this.element.dataset.pending = String(pending);
      this.draw();
      if (!pending) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    return last;
  }

  private draw(): void {
    const cols: [Exclude<Key, 'worst'>, string, string][] = [
      ['status', 'Status', ''],
      ['run', 'Run', ''],
      ['host', 'Host', ''],
      ['title', 'Worst finding', ''],
      ['step_ms', 'Step', 'num'],
      ['busy', 'GPU busy', 'num'],
      ['saving', 'Top saving', 'num'],
    ];
    this.table.textContent = '';
    // the opening order is no column's: it is said in words, and no column shows an arrow
    if (this.sort.key === 'worst')
      this.table.appendChild(
        el('caption', {id: 'overview-order'}, 'Worst first: the largest saving first, then the most severe status'),
      );
    this.table.appendChild(
      el(
        'tr',
        {},
        ...cols.map(([key, label, cls]) => {
          const on = this.sort.key === key;
          return el(
            'th',
            {class: cls, 'aria-sort': on ? (this.sort.descending ? 'descending' : 'ascending') : 'none'},
            el(
              'button',
              {
                type: 'button',
                class: 'sort',
                'data-key': key,
                onclick: () => {
                  this.sort = {key, descending: on ? !this.sort.descending : key === 'saving' || key === 'step_ms'};
                  this.draw();
                },
              },
              label,
              on ? (this.sort.descending ? ' ▼' : ' ▲') : '',
            ),
          );
        }),
      ),
    );
    for (const r of sortRows(this.rows, this.sort.key, this.sort.descending)) {
      const running = r.state !== 'done' && r.state !== 'error';
      const row = el(
        'tr',
        {
          class: r.job ? 'run-row job-row' : 'run-row',
          tabindex: 0,
          'data-run': r.run,
          'data-host': r.host,
          'data-status': r.status,
          role: 'link',
        },
        el('td', {}, chip(running ? 'not-applicable' : r.status)),
        el('td', {class: 'run-name'}, r.run),
        el('td', {}, r.job ? `all ${r.ranks} ranks (the job)` : r.host),
        el('td', {}, running ? `${r.state}${r.progress ? ` ${Math.round(100 * r.progress)}%` : ''}…` : r.title),
        el('td', {class: 'num'}, fmtDuration(r.step_ms)),
        el('td', {class: 'num'}, fmtPct(r.busy)),
        el('td', {class: 'num'}, r.saving ? `${fmtDuration(r.saving)}/step` : '—'),
      );
      row.addEventListener('click', () => this.open(r.run, r.host));
      row.addEventListener('keydown', (e) => {
        if ((e as KeyboardEvent).key === 'Enter') this.open(r.run, r.host);
      });
      this.table.appendChild(row);
    }
  }
}
