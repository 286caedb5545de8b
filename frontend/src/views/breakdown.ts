// The step time breakdown: a stacked bar per step (ms on the y axis, step numbers on the x axis), for
// the GPUs' mean or one GPU when they differ, each step's kernel figures on hover; clicking a step zooms
// the timeline to it.

import {append, clear, el, svg} from '../dom';
import {fmtDuration} from '../format';
import {kernelFiguresLine} from '../kernelfigures';
import {Breakdown, Report, StepRow} from '../schema.gen';
import {CATEGORY_COLORS, CATEGORY_LABELS} from '../style';
import {card} from './common';

const W = 640;
const H = 190;
const PAD_L = 58;
const PAD_B = 34;
const PAD_T = 8;
const CATS = Object.keys(CATEGORY_COLORS) as (keyof Breakdown)[];

export function breakdownView(r: Report, onStep: (start: number, end: number, step: number) => void): HTMLElement {
  const c = card('breakdown', 'Step time breakdown');
  const all = r.step_breakdown ?? [];
  if (!all.length || !r.breakdown_ms) return c;
  const perGpu = r.step_breakdown_per_gpu ?? {};
  const chartBox = el('div');
  const legendBox = el('div');
  const show = (gpu: string) => {
    const steps = gpu === 'mean' ? all : (perGpu[gpu] ?? all);
    const totals = gpu === 'mean' ? r.breakdown_ms! : (r.breakdown_ms_per_gpu[gpu] ?? r.breakdown_ms!);
    clear(chartBox);
    clear(legendBox);
    chartBox.appendChild(chart(steps, onStep));
    append(legendBox, legend(totals));
  };
  const gpus = Object.keys(perGpu);
  if (gpus.length) {
    const select = el('select', {id: 'breakdown-gpu', 'aria-label': 'GPU shown in the breakdown'});
    select.appendChild(new Option('mean of the GPUs', 'mean'));
    for (const g of gpus) select.appendChild(new Option(`GPU ${g}`, g));
    select.addEventListener('change', () => show(select.value));
    c.appendChild(el('div', {class: 'row'}, el('label', {for: 'breakdown-gpu'}, 'Show ', select)));
  }
  append(c, chartBox, legendBox, el('p', {class: 'muted'}, 'Click a step to show it on the timeline.'));
  show('mean');
  return c;
}

function niceMax(v: number): number {
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function chart(steps: StepRow[], onStep: (start: number, end: number, step: number) => void): SVGElement {
  const total = (s: StepRow) => CATS.reduce((a, k) => a + (s.breakdown_ms[k] ?? 0), 0);
  const max = niceMax(Math.max(...steps.map(total), 1e-9));
  const plotH = H - PAD_B - PAD_T;
  const g = svg('svg', {
    viewBox: `0 0 ${W} ${H}`,
    width: '100%',
    role: 'img',
    class: 'breakdown-chart',
    'aria-label': 'Stacked step time breakdown per step: milliseconds per step against the step number',
  });
  // y axis: ticks at quarters of a round maximum, labelled in one unit
  for (let i = 0; i <= 4; i++) {
    const v = (max * i) / 4;
    const y = PAD_T + plotH - (v / max) * plotH;
    g.appendChild(svg('line', {x1: PAD_L, x2: W, y1: y, y2: y, stroke: 'currentColor', 'stroke-opacity': 0.12}));
    g.appendChild(
      svg(
        'text',
        {x: PAD_L - 4, y: y + 3, 'text-anchor': 'end', 'font-size': 10, fill: 'currentColor'},
        fmtDuration(v),
      ),
    );
  }
  g.appendChild(
    svg(
      'text',
      {
        x: 10,
        y: PAD_T + plotH / 2,
        'font-size': 10,
        fill: 'currentColor',
        transform: `rotate(-90 10 ${PAD_T + plotH / 2})`,
        'text-anchor': 'middle',
      },
      'time per step',
    ),
  );
  const bw = (W - PAD_L) / steps.length;
  const labelEvery = Math.max(1, Math.ceil(steps.length / 12));
  steps.forEach((s, i) => {
    const x = PAD_L + i * bw;
    const bar = svg('g', {
      class: 'step-bar',
      'data-step': s.step,
      tabindex: 0,
      role: 'button',
      'aria-label': `step ${s.step}`,
    });
    let y = PAD_T + plotH;
    for (const k of CATS) {
      const v = s.breakdown_ms[k] ?? 0;
      if (v <= 0) continue;
      const h = (v / max) * plotH;
      y -= h;
      bar.appendChild(
        svg(
          'rect',
          {x: x + bw * 0.1, y, width: Math.max(bw * 0.8, 0.5), height: h, fill: CATEGORY_COLORS[k]},
          svg('title', {}, `step ${s.step}: ${CATEGORY_LABELS[k]} ${fmtDuration(v)}`),
        ),
      );
    }
    // the whole column is clickable, however short the bar
    bar.appendChild(
      svg(
        'rect',
        {x, y: PAD_T, width: bw, height: plotH, fill: 'transparent'},
        svg(
          'title',
          {},
          `step ${s.step}: ${fmtDuration(total(s))} · ${kernelFiguresLine(s)}; click to show it on the timeline`,
        ),
      ),
    );
    bar.addEventListener('click', () => onStep(s.start_ms, s.end_ms, s.step));
    bar.addEventListener('keydown', (e) => {
      if ((e as KeyboardEvent).key === 'Enter') onStep(s.start_ms, s.end_ms, s.step);
    });
    g.appendChild(bar);
    if (i % labelEvery === 0)
      g.appendChild(
        svg(
          'text',
          {x: x + bw / 2, y: PAD_T + plotH + 12, 'text-anchor': 'middle', 'font-size': 10, fill: 'currentColor'},
          String(s.step),
        ),
      );
  });
  g.appendChild(
    svg(
      'text',
      {x: PAD_L + (W - PAD_L) / 2, y: H - 4, 'text-anchor': 'middle', 'font-size': 10, fill: 'currentColor'},
      'step',
    ),
  );
  return g;
}

function legend(totals: Breakdown): HTMLElement {
  return el(
    'div',
    {class: 'legend'},
    ...CATS.map((k) => {
      const i = el('i');
      i.style.background = CATEGORY_COLORS[k];
      return el('span', {}, i, `${CATEGORY_LABELS[k]} ${fmtDuration(totals[k])}`);
    }),
  );
}
