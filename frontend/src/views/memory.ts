// The memory view: per device, allocated (and reserved) memory over the capture as an SVG curve, the
// peak marked with its time and value, the capacity and the headroom left; and the ops allocating
// around the peak. Data: the `table` route's memory answer.

import {errorMessage, getJson} from '../api';
import {append, clear, el, svg} from '../dom';
import {fmtBytes} from '../format';
import {Column, Row, TableAnswer, cellText} from '../tablemath';
import {traceViewerWindowUrl} from '../urlstate';

const W = 800;
const H = 220;
const LEFT = 64;
const RIGHT = 12;
const TOP = 12;
const BOTTOM = 24;

export type MemorySeries = NonNullable<TableAnswer['series']>[number];

/** The memory view, filled when the route answers. `atMs`: a finding's time to mark (its peak). */
export function memoryView(base: string, run: string, host: string, atMs: number | null): HTMLElement {
  const root = el('div', {class: 'memory-view', id: 'memory-view', 'data-loading': 'true'});
  void (async () => {
    for (;;) {
      const res = await getJson<TableAnswer>('table', {run, host, table: 'memory'});
      if (res.status === 202) continue;
      root.dataset.loading = 'false';
      if (res.status !== 200) {
        root.appendChild(el('p', {class: 'error', role: 'alert'}, errorMessage(res.body)));
        return;
      }
      fill(root, res.body, atMs, (t) => traceViewerWindowUrl(base, run, host, t, t));
      return;
    }
  })();
  return root;
}

function fill(root: HTMLElement, a: TableAnswer, atMs: number | null, traceAt: (t: number) => string): void {
  clear(root);
  for (const n of a.notes ?? []) root.appendChild(el('p', {class: 'notice table-note'}, n));
  const series = a.series ?? [];
  const around = a.around_peak ?? [];
  for (const row of a.rows as unknown as Row[]) {
    // XSpace: one row per allocator, several of them the host's (device -1)
    const same = (x: {device: number; allocator: string}) =>
      x.device === row.device && x.allocator === (row.allocator ?? '');
    const s = series.find(same);
    const view = deviceView(row, s, atMs, traceAt);
    const ops = around.filter(same);
    if (ops.length) append(view, el('h4', {}, 'Ops allocating around the peak'), aroundPeak(ops));
    root.appendChild(view);
  }
}

/** The allocations before the peak, the op that made each (the allocator's records carry no name
 * when no op was running). */
function aroundPeak(ops: NonNullable<TableAnswer['around_peak']>): HTMLElement {
  const t = el(
    'table',
    {class: 'around-peak'},
    el('tr', {}, el('th', {}, 'Op'), el('th', {class: 'num'}, 'Allocated'), el('th', {class: 'num'}, 'At')),
  );
  for (const o of ops)
    t.appendChild(
      el(
        'tr',
        {},
        el('td', {class: 'name', title: o.name}, o.name || '(no op)'),
        el('td', {class: 'num', title: `${o.bytes} bytes`}, fmtBytes(o.bytes)),
        el('td', {class: 'num'}, `${o.t_ms.toFixed(3)} ms`),
      ),
    );
  return t;
}

function deviceView(
  row: Row,
  s: MemorySeries | undefined,
  atMs: number | null,
  traceAt: (t: number) => string,
): HTMLElement {
  const num = (k: string) => (typeof row[k] === 'number' ? (row[k] as number) : null);
  const peak = num('peak_allocated_bytes');
  const peakT = num('peak_time_ms');
  const cap = num('capacity_bytes');
  const headroom = num('headroom_bytes');
  const bytes: Column = {key: '', label: '', unit: 'bytes', numeric: true};
  const facts = el(
    'p',
    {class: 'memory-facts'},
    el('span', {class: 'peak'}, `Peak allocated ${cellText(bytes, peak) || 'n/a'}`),
    peakT !== null ? ` at ${peakT.toFixed(3)} ms` : '',
    // TensorFlow's allocators have stack-reserved memory, not PyTorch's caching-allocator reserve
    num('stack_reserved_bytes') !== null
      ? ` · stack reserved ${cellText(bytes, num('stack_reserved_bytes'))} · free ${cellText(bytes, num('free_bytes')) || 'n/a'}`
      : ` · peak reserved ${cellText(bytes, num('peak_reserved_bytes')) || 'n/a'}`,
    ` · capacity ${cellText(bytes, cap) || 'unknown'}`,
    ` · headroom ${cellText(bytes, headroom) || 'unknown'}`,
    peakT !== null ? ' · ' : '',
    peakT !== null
      ? el(
          'a',
          {
            class: 'row-trace',
            href: traceAt(peakT),
            target: '_blank',
            rel: 'noopener',
            title: 'The trace viewer at the peak',
          },
          'Trace ↗',
        )
      : null,
  );
  const label = String(row.label ?? `GPU ${row.device}`);
  return el(
    'div',
    {class: 'memory-device', 'data-device': String(row.device)},
    el('h3', {}, label),
    facts,
    s && s.points.length
      ? memoryChart(s, peak, peakT, atMs)
      : el('p', {class: 'muted'}, 'No memory records over time.'),
  );
}

/** The curve: time on x, bytes on y from 0 to the capacity (or the largest value without one). */
export function memoryChart(
  s: MemorySeries,
  peak: number | null,
  peakT: number | null,
  atMs: number | null,
): SVGElement {
  const pts = s.points;
  const t0 = pts[0][0];
  const t1 = Math.max(pts[pts.length - 1][0], t0 + 1e-6);
  let top = s.capacity_bytes ?? 0;
  for (const [, a, r] of pts) top = Math.max(top, a, r ?? 0);
  top = Math.max(top, 1);
  const x = (t: number) => LEFT + ((t - t0) / (t1 - t0)) * (W - LEFT - RIGHT);
  const y = (b: number) => TOP + (1 - b / top) * (H - TOP - BOTTOM);
  // a step curve: memory holds its value until the next record
  const path = (k: 1 | 2) => {
    const out: string[] = [];
    let prev: number | null = null;
    for (const p of pts) {
      const v = p[k];
      if (v === null) continue;
      const px = x(p[0]).toFixed(1);
      if (prev !== null) out.push(`${px},${y(prev).toFixed(1)}`);
      out.push(`${px},${y(v).toFixed(1)}`);
      prev = v;
    }
    return out.join(' ');
  };
  const chart = svg('svg', {
    class: 'memory-chart',
    viewBox: `0 0 ${W} ${H}`,
    role: 'img',
    'aria-label': `${s.label}: memory allocated over time`,
    'data-device': s.device,
    'data-t0': t0,
    'data-t1': t1,
  });
  for (const f of [0, 0.25, 0.5, 0.75, 1]) {
    const b = top * f;
    append(
      chart,
      svg('line', {class: 'grid', x1: LEFT, x2: W - RIGHT, y1: y(b), y2: y(b)}),
      svg('text', {class: 'axis', x: LEFT - 4, y: y(b) + 4, 'text-anchor': 'end'}, fmtBytes(b)),
    );
  }
  append(
    chart,
    svg('text', {class: 'axis', x: LEFT, y: H - 6}, `${t0.toFixed(1)} ms`),
    svg('text', {class: 'axis', x: W - RIGHT, y: H - 6, 'text-anchor': 'end'}, `${t1.toFixed(1)} ms`),
  );
  if (s.capacity_bytes)
    append(
      chart,
      svg('line', {class: 'capacity', x1: LEFT, x2: W - RIGHT, y1: y(s.capacity_bytes), y2: y(s.capacity_bytes)}),
      svg(
        'text',
        {class: 'capacity-label', x: W - RIGHT - 2, y: y(s.capacity_bytes) + 12, 'text-anchor': 'end'},
        `capacity ${fmtBytes(s.capacity_bytes)}`,
      ),
    );
  if (pts.some((p) => p[2] !== null)) chart.appendChild(svg('polyline', {class: 'reserved', points: path(2)}));
  chart.appendChild(svg('polyline', {class: 'allocated', points: path(1)}));
  if (atMs !== null && atMs !== peakT)
    chart.appendChild(svg('line', {class: 'at-marker', x1: x(atMs), x2: x(atMs), y1: TOP, y2: H - BOTTOM}));
  if (peak !== null && peakT !== null) {
    const px = x(peakT);
    const anchor = px > W * 0.7 ? 'end' : 'start';
    append(
      chart,
      svg('line', {class: 'peak-line', x1: px, x2: px, y1: TOP, y2: H - BOTTOM}),
      svg(
        'circle',
        {class: 'peak-marker', cx: px, cy: y(peak), r: 4, 'data-t': peakT, 'data-bytes': peak},
        svg('title', {}, `Peak ${fmtBytes(peak)} at ${peakT.toFixed(3)} ms`),
      ),
      svg(
        'text',
        {
          class: 'peak-label',
          x: anchor === 'end' ? px - 6 : px + 6,
          y: Math.max(y(peak) - 6, TOP + 10),
          'text-anchor': anchor,
        },
        `peak ${fmtBytes(peak)} at ${peakT.toFixed(3)} ms`,
      ),
    );
  }
  return chart;
}
