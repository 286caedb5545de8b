// A run's hosts side by side, read as a job: the job's line (ranks, cycles, the straggler named), a
// picker of its profiling cycles, the job checks that fired, a heat map of every rank (views/rankstrip)
// and a sortable table of ranks with the outlying measures marked; a click on a rank opens it.

import {el} from '../dom';
import {fmtDuration, fmtPct} from '../format';
import {AcrossHosts, CatalogueEntry, HostSummary} from '../schema.gen';
import {card, chip, PROBLEMS} from './common';
import {RankStrip} from './rankstrip';

type Rank = AcrossHosts['ranks'][number];

/** The host checks that read a rank's collective time as transfer, as the catalogue says
 * (`@check(collective_time=True)`): in a job with a straggler, most of it is waiting for it. */
export function collectiveTimeChecks(catalogue: CatalogueEntry[]): string[] {
  return catalogue.filter((c) => c.collective_time).map((c) => c.id);
}

/** What a rank's collective-time findings cannot tell alone, as the CLI says it under them: how much
 * of its collectives per step is the wait for the job's straggler ('' when it waits for none). */
export function jobWaitText(runs: AcrossHosts[], host: string): string {
  for (const job of runs) {
    const rank = job.ranks.find((r) => r.host === host);
    if (!rank?.straggler_wait_ms) continue;
    const who = job.ranks
      .filter((r) => r.straggler)
      .map((r) => r.label)
      .join(', ');
    return `In the job: ${fmtDuration(rank.straggler_wait_ms)} of it per step is waiting for the straggler ${who} (job.straggler): fix that first.`;
  }
  return '';
}

/** The reports the table lists: a job's ranks in its picked cycle (another cycle of a rank is not its
 * peer), and any file that could not be read; every report when the run is not a job. */
export function shownReports(reports: HostSummary[], across: AcrossHosts | undefined): HostSummary[] {
  const picked = new Set((across?.ranks ?? []).map((r) => r.host));
  return picked.size ? reports.filter((r) => picked.has(r.host) || r.failure) : reports;
}

export interface JobRow {
  host: string;
  label: string; // `rank 3 (vm_2258)`, or the host
  rank: number | null;
  straggler: boolean;
  outliers: string[];
  step_ms: number | null;
  busy: number | null;
  compute_ms: number | null;
  collective_ms: number | null;
  exposed_ms: number | null;
  input_ms: number | null;
  wait_ms: number | null; // of its collective time, the wait for the straggler
  status: string; // the worst problem's status, 'pass', or 'error'
  worst: string;
  worst_id: string | null;
}

/** One row per report the table lists, in the job's order. */
export function jobRows(reports: HostSummary[], across: AcrossHosts | undefined): JobRow[] {
  const ranks = new Map((across?.ranks ?? []).map((r) => [r.host, r]));
  return shownReports(reports, across).map((r) => {
    // the most severe problem (critical before warning), not the first listed: checks are ranked by saving
    const worst = PROBLEMS.slice(0, 2)
      .map((s) => r.checks.find((x) => x.status === s))
      .find((x) => x !== undefined);
    const m = r.rank_measures;
    const k: Rank | undefined = ranks.get(r.host);
    return {
      host: r.host,
      label: k?.label ?? r.host,
      rank: k?.rank ?? m?.rank ?? null,
      straggler: !!k?.straggler,
      outliers: k?.outliers ?? [],
      step_ms: r.steps?.mean_ms ?? null,
      busy: r.headline?.device_busy_pct ?? null,
      compute_ms: m?.compute_ms ?? null,
      collective_ms: m?.collective_ms ?? null,
      exposed_ms: m?.exposed_collective_ms ?? null,
      input_ms: m?.input_ms ?? null,
      wait_ms: k?.straggler_wait_ms ?? null,
      status: worst?.status ?? (r.failure ? 'error' : 'pass'),
      worst: worst?.title ?? r.errors[0] ?? 'no problem found',
      worst_id: worst?.id ?? null,
    };
  });
}

export type JobKey = 'rank' | 'step_ms' | 'busy' | 'compute_ms' | 'collective_ms' | 'input_ms' | 'status';
const STATUS_RANK: Record<string, number> = {critical: 0, error: 1, warning: 2, info: 3, pass: 4};

/** The rows by a column; ties (and rows without a value, last) in the job's rank order. */
export function sortJobRows(rows: JobRow[], key: JobKey, descending: boolean): JobRow[] {
  const value = (r: JobRow): number | null =>
    key === 'status' ? -(STATUS_RANK[r.status] ?? 5) : key === 'rank' ? (r.rank ?? null) : r[key];
  const order = new Map(rows.map((r, i) => [r, i]));
  return [...rows].sort((a, b) => {
    const x = value(a);
    const y = value(b);
    if (x === null || y === null) return x === y ? order.get(a)! - order.get(b)! : x === null ? 1 : -1;
    return (descending ? y - x : x - y) || order.get(a)! - order.get(b)!;
  });
}

/** "cycle 2 of 3 · 8 ranks", or with the ranks that have no step in it. */
export function cycleLabel(across: AcrossHosts, k: number): string {
  const c = across.cycle_ranks[k];
  const ranks = across.ranks_captured;
  const head = `cycle ${k + 1} of ${across.cycles}`;
  if (!c) return head;
  if (c.with_steps === ranks) return `${head} · ${ranks} ranks`;
  return `${head} · ${c.with_steps} of ${ranks} ranks with a step`;
}

export interface JobViewOptions {
  open: (host: string) => void;
  pickCycle: (cycle: number) => void;
  collectiveTime: string[]; // collectiveTimeChecks of the catalogue
}

export class JobView {
  readonly element: HTMLElement;
  readonly strip: RankStrip | null = null;
  private sort: {key: JobKey; descending: boolean} | null = null;
  private readonly rows: JobRow[];
  private readonly table = el('table', {class: 'hosts', id: 'rank-table'});

  constructor(
    reports: HostSummary[],
    across: AcrossHosts | undefined,
    private readonly options: JobViewOptions,
  ) {
    const c = card('all-hosts', across ? `Job ${across.run}` : 'All hosts of this run');
    this.rows = jobRows(reports, across);
    if (across) {
      const stragglers = across.ranks.filter((r) => r.straggler).map((r) => r.label);
      const captured = across.world_size
        ? `${across.ranks_captured} of ${across.world_size} ranks`
        : `${across.ranks_captured} rank${across.ranks_captured === 1 ? '' : 's'}`;
      const cycles =
        across.cycles > 1 ? `, ${across.cycles} profiling cycles (cycle ${across.cycle + 1} compared)` : '';
      c.appendChild(
        el(
          'p',
          {id: 'stragglers'},
          `Job ${across.run}: ${captured}${cycles}. `,
          across.ranks.length < 2
            ? '' // one rank: no other to wait for it
            : stragglers.length
              ? `Straggler (its own work an outlier while the other ranks wait in collectives): ${stragglers.join(', ')}.`
              : 'No straggler: no rank works longer while the others wait in collectives.',
        ),
      );
      if (across.cycles > 1) c.appendChild(this.cyclePicker(across));
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
      if (across.ranks.length) {
        this.strip = new RankStrip(across.ranks, options.open);
        c.appendChild(this.strip.element);
      }
    }
    c.appendChild(this.table);
    this.element = c;
    this.drawTable();
  }

  /** Show it in `main`; `arrived` is when its answer was parsed. */
  mount(main: HTMLElement, arrived: number): void {
    main.appendChild(el('div', {class: 'layout single'}, this.element));
    this.strip?.draw();
    // from the answer (parsed) to the picture drawn and painted; the browser tests read both
    requestAnimationFrame(() => {
      this.element.dataset.paintedAt = performance.now().toFixed(1);
      this.element.dataset.renderMs = (performance.now() - arrived).toFixed(1);
    });
  }

  private cyclePicker(across: AcrossHosts): HTMLElement {
    const select = el('select', {id: 'cycle-select', 'aria-label': 'Profiling cycle'});
    for (let k = 0; k < across.cycles; k++) select.appendChild(new Option(cycleLabel(across, k), String(k)));
    select.value = String(across.cycle);
    select.addEventListener('change', () => this.options.pickCycle(Number(select.value)));
    return el(
      'label',
      {for: 'cycle-select', class: 'cycle-pick', title: 'The profiling cycle whose ranks are compared'},
      'Profiling cycle ',
      select,
    );
  }

  private drawTable(): void {
    const cols: [JobKey, string, string][] = [
      ['rank', 'Rank', ''],
      ['step_ms', 'Step', 'num'],
      ['busy', 'GPU busy', 'num'],
      ['compute_ms', 'Compute', 'num'],
      ['collective_ms', 'Collectives (exposed)', 'num'],
      ['input_ms', 'Input wait', 'num'],
      ['status', 'Worst finding', ''],
    ];
    this.table.textContent = '';
    this.table.appendChild(
      el(
        'tr',
        {},
        ...cols.map(([key, label, cls]) => {
          const on = this.sort?.key === key;
          return el(
            'th',
            {class: cls, 'aria-sort': on ? (this.sort!.descending ? 'descending' : 'ascending') : 'none'},
            el(
              'button',
              {
                type: 'button',
                class: 'sort',
                'data-key': key,
                onclick: () => {
                  this.sort = {key, descending: on ? !this.sort!.descending : key !== 'rank'};
                  this.drawTable();
                },
              },
              label,
              on ? (this.sort!.descending ? ' ▼' : ' ▲') : '',
            ),
          );
        }),
      ),
    );
    const rows = this.sort ? sortJobRows(this.rows, this.sort.key, this.sort.descending) : this.rows;
    const median = medians(this.rows);
    const num = (r: JobRow, key: keyof JobRow & string, text: string, measure = key) => {
      const odd = r.outliers.includes(measure);
      const v = r[key] as number | null;
      const up = odd && v !== null && v > (median[key] ?? v);
      return el(
        'td',
        odd ? {class: 'num outlier', title: `${up ? 'more' : 'less'} than the other ranks`} : {class: 'num'},
        text,
        odd
          ? el(
              'span',
              {class: 'outlier-mark', 'aria-label': up ? 'stands out high' : 'stands out low'},
              up ? ' ▲' : ' ▼',
            )
          : null,
      );
    };
    for (const r of rows) {
      const row = el(
        'tr',
        {
          class: r.straggler ? 'host-row straggler' : 'host-row',
          tabindex: 0,
          'data-host': r.host,
          'data-rank': r.rank ?? undefined,
          'data-outliers': r.outliers.join(' ') || undefined,
          role: 'link',
        },
        el('td', {}, r.label, r.straggler ? el('span', {class: 'badge'}, 'straggler') : null),
        num(r, 'step_ms', fmtDuration(r.step_ms)),
        el('td', {class: 'num'}, fmtPct(r.busy)),
        num(r, 'compute_ms', fmtDuration(r.compute_ms)),
        num(
          r,
          'collective_ms',
          r.collective_ms != null ? `${fmtDuration(r.collective_ms)} (${fmtDuration(r.exposed_ms)})` : '—',
        ),
        num(r, 'input_ms', fmtDuration(r.input_ms)),
        el('td', {}, chip(r.status), ' ', r.worst, waitNote(r, this.options.collectiveTime)),
      );
      row.addEventListener('click', () => this.options.open(r.host));
      row.addEventListener('keydown', (e) => {
        if ((e as KeyboardEvent).key === 'Enter') this.options.open(r.host);
      });
      this.table.appendChild(row);
    }
  }
}

/** On a rank whose worst finding reads its collective time as transfer, how much of it is the wait
 * for the straggler, which only the job can tell ('' otherwise). */
export function waitText(r: Pick<JobRow, 'wait_ms' | 'worst_id'>, collectiveTime: string[]): string {
  if (!r.wait_ms || !collectiveTime.includes(r.worst_id ?? '')) return '';
  return ` (${fmtDuration(r.wait_ms)} of it waiting for the straggler)`;
}

function waitNote(r: JobRow, collectiveTime: string[]): HTMLElement | null {
  const text = waitText(r, collectiveTime);
  return text ? el('span', {class: 'muted wait-note'}, text) : null;
}

function medians(rows: JobRow[]): Partial<Record<keyof JobRow, number>> {
  const out: Partial<Record<keyof JobRow, number>> = {};
  for (const key of ['step_ms', 'compute_ms', 'collective_ms', 'input_ms'] as const) {
    const v = rows
      .map((r) => r[key])
      .filter((x): x is number => x !== null)
      .sort((a, b) => a - b);
    if (v.length) out[key] = v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }
  return out;
}
