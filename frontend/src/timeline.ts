// The timeline: GPU streams and host thread groups as rows of busy segments, step boundaries, and a
// marker per finding. Pans (drag, arrow keys) and zooms (wheel, +/-), and asks the `timeline` route
// for the visible window at the canvas's pixel width. Text from the profile is drawn on the canvas,
// never inserted as markup.

import {fmtDuration} from './format';
import {clampWindow, fit, pan, ticks, TimeWindow, toTime, toX, zoom} from './scale';
import {SEGMENT_COLORS, STATUS_COLORS} from './style';
import {TimelineResponse} from './types';

const LABEL_W = 200;
const AXIS_H = 20;
const STEP_H = 16;
const MARK_H = 16;
const ROW_H = 17;
const TOP = AXIS_H + STEP_H + MARK_H;

export interface TimelineOptions {
  load: (w: TimeWindow, width: number) => Promise<TimelineResponse | null>;
  onSelect: (check: string, index: number) => void;
}

interface HitBox {
  x0: number;
  x1: number;
  check: string;
  index: number;
}

export class TimelineView {
  readonly canvas: HTMLCanvasElement;
  readonly info: HTMLElement;
  private extent: TimeWindow = {start: 0, end: 1};
  private window: TimeWindow = {start: 0, end: 1};
  private data: TimelineResponse | null = null;
  private highlight: {check: string; index: number; start: number; end: number} | null = null;
  private hits: HitBox[] = [];
  private timer: number | undefined;
  private seq = 0;
  private drag: {x: number; window: TimeWindow} | null = null;
  private dark = false;

  constructor(private readonly opts: TimelineOptions) {
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'timeline';
    this.canvas.tabIndex = 0;
    this.canvas.setAttribute('role', 'img');
    this.canvas.setAttribute(
      'aria-label',
      'Timeline of GPU streams and host threads. Arrow keys pan, plus and minus zoom, 0 resets.',
    );
    this.canvas.dataset.loaded = '0';
    this.info = document.createElement('div');
    this.info.className = 'muted';
    this.canvas.addEventListener('wheel', (e) => this.onWheel(e), {passive: false});
    this.canvas.addEventListener('mousedown', (e) => this.onDown(e));
    window.addEventListener('mousemove', (e) => this.onMove(e));
    window.addEventListener('mouseup', (e) => this.onUp(e));
    this.canvas.addEventListener('keydown', (e) => this.onKey(e));
    new ResizeObserver(() => this.resize()).observe(this.canvas);
  }

  setDark(dark: boolean): void {
    this.dark = dark;
    this.draw();
  }

  /** A new profile: show all of it. */
  reset(extentMs: number): void {
    this.extent = {start: 0, end: Math.max(extentMs, 0.001)};
    this.highlight = null;
    this.canvas.dataset.highlight = '';
    this.data = null;
    this.setWindow({...this.extent});
  }

  get visible(): TimeWindow {
    return this.window;
  }

  setWindow(w: TimeWindow): void {
    this.window = clampWindow(w, this.extent);
    this.canvas.dataset.windowStart = String(this.window.start);
    this.canvas.dataset.windowEnd = String(this.window.end);
    this.draw();
    this.schedule();
  }

  /** Zoom to a finding's evidence window and mark it. */
  show(check: string, index: number, start: number, end: number): void {
    this.highlight = {check, index, start, end};
    this.canvas.dataset.highlight = `${check}:${index}`;
    this.canvas.dataset.highlightStart = String(start);
    this.canvas.dataset.highlightEnd = String(end);
    this.setWindow(fit(start, end, this.extent));
  }

  zoomBy(factor: number): void {
    this.setWindow(zoom(this.window, factor, 0.5, this.extent));
  }

  panBy(frac: number): void {
    this.setWindow(pan(this.window, frac, this.extent));
  }

  resetZoom(): void {
    this.setWindow({...this.extent});
  }

  private plotWidth(): number {
    return Math.max(50, this.canvas.clientWidth - LABEL_W);
  }

  private schedule(): void {
    window.clearTimeout(this.timer);
    this.timer = window.setTimeout(() => void this.fetch(), 120);
  }

  private async fetch(): Promise<void> {
    const id = ++this.seq;
    const w = {...this.window};
    const res = await this.opts.load(w, Math.round(this.plotWidth()));
    if (id !== this.seq || !res) return; // a newer request superseded this one
    this.data = res;
    this.canvas.dataset.tracks = String(res.tracks.length);
    this.canvas.dataset.loaded = String(Number(this.canvas.dataset.loaded) + 1);
    this.draw();
  }

  private resize(): void {
    this.draw();
    this.schedule();
  }

  private onWheel(e: WheelEvent): void {
    e.preventDefault();
    const rect = this.canvas.getBoundingClientRect();
    const frac = Math.min(1, Math.max(0, (e.clientX - rect.left - LABEL_W) / this.plotWidth()));
    if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
      this.setWindow(pan(this.window, (e.deltaX || e.deltaY) / 800, this.extent));
    } else {
      this.setWindow(zoom(this.window, Math.exp(e.deltaY / 400), frac, this.extent));
    }
  }

  private onDown(e: MouseEvent): void {
    const rect = this.canvas.getBoundingClientRect();
    const x = e.clientX - rect.left - LABEL_W;
    const y = e.clientY - rect.top;
    if (y >= AXIS_H + STEP_H && y < TOP) {
      const hit = this.hits.find((h) => x >= h.x0 - 3 && x <= h.x1 + 3);
      if (hit) {
        this.opts.onSelect(hit.check, hit.index);
        return;
      }
    }
    this.drag = {x: e.clientX, window: {...this.window}};
    this.canvas.classList.add('dragging');
  }

  private onMove(e: MouseEvent): void {
    const rect = this.canvas.getBoundingClientRect();
    if (this.drag) {
      const dx = e.clientX - this.drag.x;
      const span = this.drag.window.end - this.drag.window.start;
      const d = (-dx / this.plotWidth()) * span;
      this.setWindow({start: this.drag.window.start + d, end: this.drag.window.end + d});
      return;
    }
    const x = e.clientX - rect.left - LABEL_W;
    const y = e.clientY - rect.top;
    if (x < 0 || y < 0 || x > this.plotWidth() || y > rect.height) return;
    const t = toTime(this.window, this.plotWidth(), x);
    const row = Math.floor((y - TOP) / ROW_H);
    const track = this.data && row >= 0 ? this.data.tracks[row] : undefined;
    this.info.textContent = `${fmtDuration(t)}` + (track ? ` · ${track.group} · ${track.label}` : '');
  }

  private onUp(_e: MouseEvent): void {
    if (this.drag) {
      this.drag = null;
      this.canvas.classList.remove('dragging');
    }
  }

  private onKey(e: KeyboardEvent): void {
    const actions: Record<string, () => void> = {
      ArrowLeft: () => this.panBy(-0.2),
      ArrowRight: () => this.panBy(0.2),
      '+': () => this.zoomBy(0.5),
      '=': () => this.zoomBy(0.5),
      '-': () => this.zoomBy(2),
      '0': () => this.resetZoom(),
    };
    const act = actions[e.key];
    if (act) {
      e.preventDefault();
      act();
    }
  }

  draw(): void {
    const c = this.canvas;
    const dpr = window.devicePixelRatio || 1;
    const rows = this.data ? this.data.tracks.length : 0;
    const cssW = c.clientWidth || 800;
    const cssH = TOP + Math.max(rows, 1) * ROW_H + 6;
    c.style.height = `${cssH}px`;
    if (c.width !== Math.round(cssW * dpr) || c.height !== Math.round(cssH * dpr)) {
      c.width = Math.round(cssW * dpr);
      c.height = Math.round(cssH * dpr);
    }
    const ctx = c.getContext('2d');
    if (!ctx) return;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const fg = this.dark ? '#e8eaed' : '#212121';
    const fg2 = this.dark ? '#9aa0a6' : '#616161';
    const line = this.dark ? '#3c4043' : '#e0e0e0';
    ctx.fillStyle = this.dark ? '#202124' : '#ffffff';
    ctx.fillRect(0, 0, cssW, cssH);
    ctx.font = '11px Roboto, Arial, sans-serif';
    ctx.textBaseline = 'middle';
    const W = this.plotWidth();
    const w = this.window;
    const X = (t: number) => LABEL_W + toX(w, W, t);

    // axis
    ctx.fillStyle = fg2;
    for (const t of ticks(w, Math.max(2, Math.floor(W / 110)))) {
      const x = X(t);
      ctx.fillRect(x, AXIS_H - 4, 1, 4);
      ctx.fillText(fmtDuration(t), x + 3, AXIS_H / 2);
    }
    ctx.fillStyle = fg2;
    ctx.fillText('steps', 6, AXIS_H + STEP_H / 2);
    ctx.fillText('findings', 6, AXIS_H + STEP_H + MARK_H / 2);

    if (this.data) {
      // steps: alternate shading, numbers, boundaries
      this.data.steps.forEach((s, i) => {
        const x0 = Math.max(LABEL_W, X(s.start_ms));
        const x1 = Math.min(LABEL_W + W, X(s.end_ms));
        if (x1 <= x0) return;
        ctx.fillStyle = i % 2 ? (this.dark ? '#303134' : '#f1f3f4') : this.dark ? '#3c4043' : '#e8eaed';
        ctx.fillRect(x0, AXIS_H, x1 - x0, STEP_H - 2);
        if (x1 - x0 > 24) {
          ctx.fillStyle = fg2;
          ctx.fillText(String(s.number), x0 + 3, AXIS_H + STEP_H / 2 - 1);
        }
        ctx.fillStyle = line;
        ctx.fillRect(X(s.start_ms), TOP, 1, rows * ROW_H);
      });
      // findings markers
      this.hits = [];
      for (const f of this.data.findings) {
        const x0 = Math.max(LABEL_W, X(f.start_ms));
        const x1 = Math.max(x0 + 3, Math.min(LABEL_W + W, X(f.end_ms)));
        ctx.fillStyle = STATUS_COLORS[f.status] ?? fg2;
        const on = this.highlight && this.highlight.check === f.check && this.highlight.index === f.index;
        ctx.globalAlpha = on ? 1 : 0.75;
        ctx.fillRect(x0, AXIS_H + STEP_H + 2, x1 - x0, MARK_H - 4);
        ctx.globalAlpha = 1;
        this.hits.push({x0: x0 - LABEL_W, x1: x1 - LABEL_W, check: f.check, index: f.index});
      }
      // rows
      this.data.tracks.forEach((tr, r) => {
        const y = TOP + r * ROW_H;
        ctx.fillStyle = r % 2 ? (this.dark ? '#242528' : '#fafafa') : this.dark ? '#202124' : '#ffffff';
        ctx.fillRect(LABEL_W, y, W, ROW_H);
        ctx.fillStyle = fg;
        const label = `${tr.group} · ${tr.label}`;
        ctx.save();
        ctx.beginPath();
        ctx.rect(0, y, LABEL_W - 6, ROW_H);
        ctx.clip();
        ctx.fillText(label, 6, y + ROW_H / 2);
        ctx.restore();
        for (const [s, e, density, cls] of tr.segments) {
          const x0 = X(s);
          const x1 = Math.max(x0 + 1, X(e));
          if (x1 < LABEL_W || x0 > LABEL_W + W) continue;
          ctx.fillStyle = SEGMENT_COLORS[cls] ?? '#9aa0a6';
          ctx.globalAlpha = 0.35 + 0.65 * Math.min(1, Math.max(0, density));
          ctx.fillRect(Math.max(LABEL_W, x0), y + 2, Math.min(LABEL_W + W, x1) - Math.max(LABEL_W, x0), ROW_H - 4);
        }
        ctx.globalAlpha = 1;
      });
    } else {
      ctx.fillStyle = fg2;
      ctx.fillText('loading…', LABEL_W + 8, TOP + ROW_H / 2);
    }
    // the selected finding's window, across every row
    if (this.highlight) {
      const x0 = Math.max(LABEL_W, X(this.highlight.start));
      const x1 = Math.min(LABEL_W + W, Math.max(X(this.highlight.end), x0 + 2));
      if (x1 > x0) {
        ctx.fillStyle = this.dark ? 'rgba(255,152,0,0.18)' : 'rgba(245,124,0,0.14)';
        ctx.fillRect(x0, AXIS_H, x1 - x0, cssH - AXIS_H);
        ctx.strokeStyle = '#f57c00';
        ctx.lineWidth = 1.5;
        ctx.strokeRect(x0, AXIS_H, x1 - x0, cssH - AXIS_H - 1);
      }
    }
    ctx.fillStyle = line;
    ctx.fillRect(LABEL_W - 1, 0, 1, cssH);
  }
}
