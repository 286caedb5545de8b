// A run against the one before a change: step time per step (mean and spread), the step's verdict with
// the basis it was judged on (the captured steps, or the steps without the profiler with the model's
// measured error), the breakdown as two stacked bars with each category's delta, the headline numbers,
// each check's status, its own time and saving in both with its verdict (fixed, new, worse, better,
// exposed), the before-run's prediction for the findings the after-run no longer has against what the
// step did, and the kernels and ops that moved. The text follows present/render_diff.py's.

import {el, svg} from '../dom';
import {fmtDuration, fmtPct, fmtValue, shortName} from '../format';
import {Diff} from '../schema.gen';
import {CATEGORY_COLORS, CATEGORY_LABELS, STATUS_COLORS} from '../style';
import {card, chip} from './common';

const VERDICT_COLORS: Record<string, string> = {
  fixed: STATUS_COLORS.pass,
  better: '#34a853',
  new: STATUS_COLORS.critical,
  worse: STATUS_COLORS.warning,
  exposed: '#80868b',
  unchanged: STATUS_COLORS['not-applicable'],
};

function signed(v: number | null, unit = 'ms'): string {
  if (v === null) return '—';
  const s = unit === 'ms' ? fmtDuration(Math.abs(v)) : `${Math.abs(v).toFixed(1)} ${unit}`;
  return `${v < 0 ? '−' : v > 0 ? '+' : '±'}${s}`;
}

function verdictChip(v: string): HTMLElement {
  const c = el('span', {class: 'chip verdict', 'data-verdict': v}, v);
  c.style.background = VERDICT_COLORS[v] ?? '#80868b';
  return c;
}

const STEP_WORDS: Record<string, string> = {
  faster: 'faster',
  slower: 'slower',
  same: 'unchanged (within noise)',
  uncertain: 'uncertain',
  unknown: 'unknown',
};

/** ", 95% interval −14.41 ms to −13.51 ms" ('' without an interval). */
function interval(iv: number[] | null | undefined, what = '95% interval'): string {
  if (!iv) return '';
  return `, ${what} ${signed(iv[0]!)} to ${signed(iv[1]!)}`;
}

function pctOf(v: number | null): string {
  return v === null ? '' : ` (${v > 0 ? '+' : ''}${v.toFixed(1)}%)`;
}

function band(e: {low_pct: number; high_pct: number}): string {
  const p = (v: number) => `${v > 0 ? '+' : v < 0 ? '−' : '±'}${Math.abs(v).toFixed(1)}%`;
  return `${p(e.low_pct)} to ${p(e.high_pct)}`;
}

/** The step's verdict with its basis and the interval on it, as the command's "verdict:" line. */
export function basisText(d: Diff): string {
  const v = d.verdict;
  const a = d.apart;
  let where: string;
  let why: string;
  if (v.basis === 'unprofiled' && a) {
    where = `on the steps without the profiler, as the model estimates them (${fmtDuration(a.base.step_ms)} → ${fmtDuration(a.new.step_ms)})`;
    why = ` (the model's measured error: ${band(a.base.error)} before, ${band(a.new.error)} after)`;
  } else {
    where = 'on the captured steps';
    const s = d.steps.interval_ms;
    const widened = a && v.interval_ms && s && (v.interval_ms[0] !== s[0] || v.interval_ms[1] !== s[1]);
    why =
      widened && a
        ? ` (the steps' 95% interval, widened by the profiler's cost, ${fmtDuration(a.base.profiler_ms)} → ${fmtDuration(a.new.profiler_ms)} a step)`
        : v.interval_ms
          ? " (the steps' 95% interval)"
          : ' (too few steps for an interval: by size alone)';
  }
  const reason = v.reason ? `; ${v.reason}` : '';
  return `${STEP_WORDS[v.verdict] ?? v.verdict}, ${where}: ${signed(v.delta_ms)}${pctOf(v.delta_pct)}${interval(v.interval_ms, 'interval')}${why}${reason}`;
}

/** Before (the base) and after (the new run), labelled; `swap` exchanges them, `back` leaves. */
export function compareView(d: Diff, back: () => void, swap: () => void): HTMLElement {
  const s = d.steps;
  const noise = d.summary.within_noise;
  const head = card(
    'comparison',
    'Comparison',
    el(
      'p',
      {class: 'compare-title'},
      el('span', {class: 'muted'}, 'before '),
      el('strong', {id: 'compare-before'}, d.base.run),
      ` (${d.base.host})`,
      el('span', {class: 'muted'}, ' → after '),
      el('strong', {id: 'compare-after'}, d.new.run),
      ` (${d.new.host})`,
      ' ',
      el(
        'button',
        {type: 'button', id: 'compare-swap', title: 'Exchange before and after', onclick: swap},
        'Swap before/after',
      ),
      ' ',
      el('button', {type: 'button', id: 'compare-back', onclick: back}, 'Back to the run'),
    ),
    el(
      'p',
      {id: 'compare-steps'},
      'Step time ',
      el('strong', {}, `${fmtDuration(s.base.mean_ms)} ± ${fmtDuration(s.base.stdev_ms)}`),
      ` (${s.base.count} steps) → `,
      el('strong', {}, `${fmtDuration(s.new.mean_ms)} ± ${fmtDuration(s.new.stdev_ms)}`),
      ` (${s.new.count} steps), as captured: `,
      el('strong', {}, `${signed(s.delta_ms)}${pctOf(s.delta_pct)}`),
      ` per step${interval(s.interval_ms)}.`,
    ),
    // green or red only for a verdict its basis supports; an uncertain one in the text's colour
    el(
      'p',
      {id: 'compare-basis', class: `step-${d.verdict.verdict}`},
      'Verdict: ',
      el('strong', {}, basisText(d)),
      '.',
    ),
    // the advisor's prediction judged by what the step did, beside the step's verdict: in the text's
    // colour, since it judges the prediction, not the user's change
    ...(d.realised
      ? [
          el(
            'p',
            {id: 'compare-realised', 'data-inside': String(d.realised.inside)},
            'Predicted against realised: ',
            el('strong', {}, d.realised.sentence),
            '.',
          ),
        ]
      : []),
    el(
      'p',
      {id: 'compare-summary'},
      ...(['fixed', 'new', 'worse', 'better', 'exposed'] as const).flatMap((k) => [
        verdictChip(k),
        ' ',
        d.summary[k].length ? d.summary[k].join(', ') : 'none',
        '  ',
      ]),
    ),
    ...(noise.length
      ? [el('p', {id: 'compare-noise', class: 'muted'}, `Unchanged (within noise): ${noise.join(', ')}.`)]
      : []),
  );
  return el('div', {class: 'compare'}, head, breakdownCard(d), checksCard(d), moversCard(d));
}

function breakdownCard(d: Diff): HTMLElement {
  const rows = d.breakdown_ms;
  const total = (k: 'base_ms' | 'new_ms') => rows.reduce((a, r) => a + (r[k] ?? 0), 0);
  const max = Math.max(total('base_ms'), total('new_ms'), 1e-9);
  const W = 640;
  const H = 70;
  const g = svg('svg', {
    viewBox: `0 0 ${W} ${H}`,
    width: '100%',
    role: 'img',
    'aria-label': 'Step time breakdown, base and new',
  });
  (['base_ms', 'new_ms'] as const).forEach((k, i) => {
    let x = 50;
    const y = 8 + i * 30;
    g.appendChild(
      svg('text', {x: 0, y: y + 15, 'font-size': 11, fill: 'currentColor'}, k === 'base_ms' ? 'base' : 'new'),
    );
    for (const r of rows) {
      const v = r[k] ?? 0;
      if (v <= 0) continue;
      const w = (v / max) * (W - 60);
      g.appendChild(
        svg(
          'rect',
          {x, y, width: w, height: 22, fill: CATEGORY_COLORS[r.category] ?? '#999'},
          svg(
            'title',
            {},
            `${k === 'base_ms' ? 'base' : 'new'}: ${CATEGORY_LABELS[r.category] ?? r.category} ${fmtDuration(v)}`,
          ),
        ),
      );
      x += w;
    }
  });
  const t = el(
    'table',
    {class: 'compare-breakdown'},
    el(
      'tr',
      {},
      el('th', {}, 'per step'),
      el('th', {class: 'num'}, 'base'),
      el('th', {class: 'num'}, 'new'),
      el('th', {class: 'num'}, 'delta'),
    ),
  );
  for (const r of rows) {
    const i = el('i');
    i.style.background = CATEGORY_COLORS[r.category] ?? '#999';
    t.appendChild(
      el(
        'tr',
        {'data-category': r.category},
        el('td', {}, i, ' ', CATEGORY_LABELS[r.category] ?? r.category),
        el('td', {class: 'num'}, fmtDuration(r.base_ms)),
        el('td', {class: 'num'}, fmtDuration(r.new_ms)),
        el('td', {class: 'num delta'}, signed(r.delta_ms)),
      ),
    );
  }
  for (const h of d.headline)
    t.appendChild(
      el(
        'tr',
        {'data-headline': h.key},
        el('td', {}, h.label),
        el('td', {class: 'num'}, h.unit === '%' ? fmtPct(h.base) : fmtDuration(h.base)),
        el('td', {class: 'num'}, h.unit === '%' ? fmtPct(h.new) : fmtDuration(h.new)),
        el('td', {class: 'num delta'}, signed(h.delta, h.unit === '%' ? 'pts' : 'ms')),
      ),
    );
  return card('compare-breakdown-card', 'Step time and headline, base and new', g, t);
}

function checksCard(d: Diff): HTMLElement {
  const t = el(
    'table',
    {class: 'compare-checks'},
    el(
      'tr',
      {},
      el('th', {}, 'Check'),
      el('th', {}, 'Verdict'),
      el('th', {}, 'Before'),
      el('th', {}, 'After'),
      el('th', {class: 'num'}, 'Saving per step'),
    ),
  );
  const show = el('input', {type: 'checkbox', id: 'compare-all'}) as HTMLInputElement;
  const draw = () => {
    while (t.rows.length > 1) t.deleteRow(1);
    for (const c of d.checks) {
      if (c.verdict === 'unchanged' && !c.within_noise && !show.checked) continue;
      const own = c.time;
      const measured = own
        ? el(
            'div',
            {class: 'muted noise'},
            `${own.measure}: ${fmtDuration(own.base_ms)} → ${fmtDuration(own.new_ms)} per step, ${signed(own.delta_ms)}${interval(own.interval_ms)}`,
          )
        : '';
      t.appendChild(
        el(
          'tr',
          {'data-check': c.id, 'data-verdict': c.verdict, 'data-within-noise': String(c.within_noise)},
          el('td', {}, el('div', {class: 'id'}, c.id), el('div', {class: 'muted'}, c.new_title ?? c.title), measured),
          el('td', {}, verdictChip(c.verdict), c.within_noise ? el('div', {class: 'muted'}, 'within noise') : ''),
          el(
            'td',
            {},
            c.base_status ? chip(c.base_status) : '—',
            ' ',
            c.label ? fmtValue(c.base_value, c.unit ?? '') : '',
          ),
          el(
            'td',
            {},
            c.new_status ? chip(c.new_status) : '—',
            ' ',
            c.label ? fmtValue(c.new_value, c.unit ?? '') : '',
          ),
          el('td', {class: 'num'}, `${fmtDuration(c.base_saving_ms)} → ${fmtDuration(c.new_saving_ms)}`),
        ),
      );
    }
  };
  show.addEventListener('change', draw);
  draw();
  const unchanged = d.summary.unchanged;
  return card(
    'compare-checks-card',
    'Checks',
    el('label', {for: 'compare-all'}, show, ` Show the ${unchanged} unchanged checks`),
    t,
  );
}

function moversCard(d: Diff): HTMLElement {
  const table = (rows: Diff['kernels'], id: string) => {
    const t = el(
      'table',
      {class: 'movers', id},
      el(
        'tr',
        {},
        el('th', {class: 'num'}, 'delta'),
        el('th', {class: 'num'}, 'base'),
        el('th', {class: 'num'}, 'new'),
        el('th', {}, 'name'),
      ),
    );
    for (const r of rows.filter((x) => Math.abs(x.delta_ms) > 1e-6))
      t.appendChild(
        el(
          'tr',
          {},
          el('td', {class: 'num delta'}, signed(r.delta_ms)),
          el('td', {class: 'num'}, fmtDuration(r.base_ms)),
          el('td', {class: 'num'}, fmtDuration(r.new_ms)),
          el('td', {class: 'name', title: r.name}, shortName(r.name)),
        ),
      );
    return t;
  };
  return card(
    'compare-movers',
    'What moved (device time per step)',
    el('strong', {}, 'Kernels'),
    table(d.kernels, 'movers-kernels'),
    el('strong', {}, 'Ops'),
    table(d.ops, 'movers-ops'),
  );
}
