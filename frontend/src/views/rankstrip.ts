// The job at a glance: one heat-map band per measure (compute, collective wait, step time), one cell
// per rank, ranks in rows so that 1,024 of them stay cells you can point at. Darker is more, on each
// band's own scale (its minimum to its maximum across ranks); the straggler is outlined in red, a
// rank's outlying measure in orange. Hover names the rank, a click or Enter opens it, the arrow keys
// move between ranks. Names go to the tooltip as text.

import {el} from '../dom';
import {fmtDuration} from '../format';
import {AcrossHosts} from '../schema.gen';

type Rank = AcrossHosts['ranks'][number];
export type StripMeasure = 'compute_ms' | 'collective_ms' | 'step_ms';

export const STRIP_BANDS: [StripMeasure, string][] = [
  ['compute_ms', 'Compute'],
  ['collective_ms', 'Collective wait'],
  ['step_ms', 'Step'],
];
const GUTTER = 118; // the bands' labels
const BAND_GAP = 16; // room for a band's scale above it
const MAX_COLS = 64;
const MAX_CELL_W = 40;

export interface StripLayout {
  cols: number;
  rows: number;
  cellW: number;
  cellH: number;
  gutter: number;
  bandTop: number[]; // the y of each band's first row of cells
  height: number;
}

/** Where the cells go: up to 64 ranks a row (one row when there are 64 or fewer), each band as tall
 * as its rows need, cells between 3 and 22 px tall. */
export function stripLayout(n: number, width: number): StripLayout {
  const cols = Math.max(1, Math.min(n, MAX_COLS));
  const rows = Math.max(1, Math.ceil(n / cols));
  const cellW = Math.max(1, Math.min(MAX_CELL_W, (width - GUTTER) / cols));
  const cellH = Math.max(3, Math.min(22, Math.floor(160 / rows)));
  const bandTop = STRIP_BANDS.map((_, b) => BAND_GAP + b * (rows * cellH + BAND_GAP));
  return {cols, rows, cellW, cellH, gutter: GUTTER, bandTop, height: bandTop[bandTop.length - 1] + rows * cellH + 2};
}

/** The rank index under a point of the canvas (CSS pixels), or -1. */
export function rankAt(layout: StripLayout, n: number, x: number, y: number): number {
  const col = Math.floor((x - layout.gutter) / layout.cellW);
  if (col < 0 || col >= layout.cols) return -1;
  for (const top of layout.bandTop) {
    const row = Math.floor((y - top) / layout.cellH);
    if (y >= top && row < layout.rows) {
      const i = row * layout.cols + col;
      return i < n ? i : -1;
    }
  }
  return -1;
}

/** A cell's top-left corner (CSS pixels) for rank index `i` in band `b`. */
export function cellOrigin(layout: StripLayout, i: number, b: number): [number, number] {
  return [
    layout.gutter + (i % layout.cols) * layout.cellW,
    layout.bandTop[b] + Math.floor(i / layout.cols) * layout.cellH,
  ];
}

/** A value's place on its band's scale, 0 (the least) to 1 (the most); 0.5 when every rank has the
 * same value, null for a rank without one. */
export function shade(v: number | null, lo: number, hi: number): number | null {
  if (v === null || !Number.isFinite(v)) return null;
  return hi > lo ? Math.min(1, Math.max(0, (v - lo) / (hi - lo))) : 0.5;
}

/** Light to dark blue in light mode, dark to bright in dark mode: more is always the stronger colour. */
export function shadeColor(t: number, dark: boolean): string {
  const [a, b] = dark
    ? [
        [40, 52, 74],
        [138, 180, 248],
      ]
    : [
        [232, 240, 254],
        [23, 78, 166],
      ];
  const c = a.map((x, k) => Math.round(x + (b[k] - x) * t));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

export function bandRange(ranks: Rank[], key: StripMeasure): [number, number] | null {
  const vs = ranks.map((r) => r[key]).filter((v): v is number => v !== null && Number.isFinite(v));
  return vs.length ? [Math.min(...vs), Math.max(...vs)] : null;
}

export class RankStrip {
  readonly element: HTMLElement;
  readonly canvas: HTMLCanvasElement;
  private readonly tip = el('div', {class: 'tl-tip', id: 'rank-tip', role: 'status'});
  private layout: StripLayout = stripLayout(0, 800);
  private cursor = -1;
  private dark = false;
  private readonly ranges: ([number, number] | null)[];

  constructor(
    private readonly ranks: Rank[],
    private readonly open: (host: string) => void,
  ) {
    this.ranges = STRIP_BANDS.map(([key]) => bandRange(ranks, key));
    this.canvas = el('canvas', {
      class: 'rank-strip',
      id: 'rank-strip',
      tabindex: 0,
      role: 'img',
      'aria-label': `${ranks.length} ranks: compute, collective wait and step time per rank, the stronger the colour the more; arrow keys move between ranks, Enter opens one`,
    });
    this.tip.hidden = true;
    const legend = el(
      'div',
      {class: 'legend'},
      'Each cell a rank; the stronger the colour, the more (each band on its own scale). ',
      el('span', {class: 'strip-key straggler'}, 'straggler'),
      el('span', {class: 'strip-key outlier'}, 'stands out'),
    );
    this.element = el('div', {class: 'tl-wrap strip-wrap'}, this.canvas, this.tip, legend);
    this.canvas.addEventListener('mousemove', (e) => this.hover(this.indexAt(e)));
    this.canvas.addEventListener('mouseleave', () => this.hover(-1, false));
    this.canvas.addEventListener('click', (e) => {
      const i = this.indexAt(e);
      if (i >= 0) this.open(this.ranks[i].host);
    });
    this.canvas.addEventListener('keydown', (e) => this.key(e));
    this.canvas.addEventListener('blur', () => this.hover(-1, false));
    // dark mode (the panel's body class follows TensorBoard's) and the width: drawn again on change;
    // the watchers end when the view is gone
    const watch = new MutationObserver(() => (this.canvas.isConnected ? this.draw() : watch.disconnect()));
    watch.observe(document.body, {attributes: true, attributeFilter: ['class']});
    let width = 0;
    const resize = new ResizeObserver(() => {
      if (!this.canvas.isConnected) return resize.disconnect();
      if (this.canvas.clientWidth !== width) {
        width = this.canvas.clientWidth;
        this.draw();
      }
    });
    resize.observe(this.canvas);
  }

  private indexAt(e: MouseEvent): number {
    const box = this.canvas.getBoundingClientRect();
    return rankAt(this.layout, this.ranks.length, e.clientX - box.left, e.clientY - box.top);
  }

  private key(e: KeyboardEvent): void {
    const n = this.ranks.length;
    const step: Record<string, number> = {
      ArrowRight: 1,
      ArrowLeft: -1,
      ArrowDown: this.layout.cols,
      ArrowUp: -this.layout.cols,
    };
    if (e.key in step) {
      e.preventDefault();
      const from = this.cursor < 0 ? 0 : this.cursor + step[e.key];
      this.hover(Math.min(n - 1, Math.max(0, from)));
    } else if (e.key === 'Enter' && this.cursor >= 0) {
      this.open(this.ranks[this.cursor].host);
    }
  }

  /** Lays the cells out for the canvas's width and paints them; the layout goes in `data-layout` (the
   * browser tests click a rank's cell from it). */
  draw(): void {
    this.dark = document.body.classList.contains('dark');
    const width = Math.max(this.canvas.clientWidth || this.element.clientWidth || 800, GUTTER + 40);
    this.layout = stripLayout(this.ranks.length, width);
    const dpr = window.devicePixelRatio || 1;
    this.canvas.style.height = `${this.layout.height}px`;
    this.canvas.width = Math.round(width * dpr);
    this.canvas.height = Math.round(this.layout.height * dpr);
    const g = this.canvas.getContext('2d');
    if (!g) return;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, width, this.layout.height);
    const fg = this.dark ? '#e8eaed' : '#212121';
    const fg2 = this.dark ? '#9aa0a6' : '#616161';
    const {cellW, cellH} = this.layout;
    const gap = cellW >= 4 ? 1 : 0;
    g.font = '12px Roboto, Arial, sans-serif';
    g.textBaseline = 'top';
    STRIP_BANDS.forEach(([key, label], b) => {
      const top = this.layout.bandTop[b];
      const range = this.ranges[b];
      g.fillStyle = fg;
      g.fillText(label, 0, top);
      g.fillStyle = fg2;
      g.fillText(range ? `${fmtDuration(range[0])} – ${fmtDuration(range[1])}` : 'n/a', 0, top + 14);
      for (let i = 0; i < this.ranks.length; i++) {
        const [x, y] = cellOrigin(this.layout, i, b);
        const t = range ? shade(this.ranks[i][key], range[0], range[1]) : null;
        g.fillStyle = t === null ? (this.dark ? '#3c4043' : '#e0e0e0') : shadeColor(t, this.dark);
        g.fillRect(x, y, Math.max(1, cellW - gap), Math.max(1, cellH - gap));
      }
      // marks over the cells, so no neighbour paints over them
      for (let i = 0; i < this.ranks.length; i++) {
        const r = this.ranks[i];
        const odd = r.outliers.includes(key);
        if (!r.straggler && !odd && i !== this.cursor) continue;
        const [x, y] = cellOrigin(this.layout, i, b);
        // the rank under the cursor in the text colour, so a straggler's red and an outlier's orange stay
        g.strokeStyle = i === this.cursor ? fg : r.straggler ? '#d93025' : '#e37400';
        g.lineWidth = 2;
        g.strokeRect(x + 1, y + 1, Math.max(1, cellW - gap - 2), Math.max(1, cellH - gap - 2));
      }
    });
    this.canvas.dataset.layout = JSON.stringify(this.layout);
    this.canvas.dataset.ranks = String(this.ranks.length);
  }

  /** Show rank `i`'s numbers beside its cell (-1 hides them). */
  private hover(i: number, keep = true): void {
    const was = this.cursor;
    this.cursor = keep ? i : -1;
    if (was !== this.cursor) this.draw();
    if (i < 0 || !keep) {
      this.tip.hidden = true;
      this.canvas.style.cursor = '';
      return;
    }
    const r = this.ranks[i];
    this.canvas.style.cursor = 'pointer';
    this.tip.textContent = '';
    this.tip.append(
      el('div', {class: 'tl-tip-title'}, r.label, r.straggler ? ' · straggler' : ''),
      el(
        'div',
        {},
        `compute ${fmtDuration(r.compute_ms)} · collectives ${fmtDuration(r.collective_ms)} · step ${fmtDuration(r.step_ms)}`,
      ),
      el('div', {class: 'muted'}, r.host),
    );
    this.tip.hidden = false;
    const [x, y] = cellOrigin(this.layout, i, 0);
    const w = this.canvas.clientWidth || 800;
    this.tip.style.left = `${Math.min(x + this.layout.cellW + 6, Math.max(0, w - 360))}px`;
    this.tip.style.top = `${y}px`;
  }
}
