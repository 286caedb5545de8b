// The timeline: GPU streams and host thread groups as rows of busy segments, step boundaries, and a
// marker per finding (in lanes, so none hides another). Pans (drag, arrow keys) and zooms (wheel,
// +/-), and asks the `timeline` route for the visible window at the canvas's pixel width. Hovering a
// row shows the event under the cursor (the `event` route) and the cursor's time; hovering a label
// shows the whole label. A selected finding is highlighted on its own rows only. Text from the
// profile is drawn on the canvas or set as text, never inserted as markup.

import {shown} from './dom';
import {fmtDuration} from './format';
import {clampWindow, fit, lanes, pan, tickLabels, ticks, TimeWindow, toTime, toX, zoom} from './scale';
import {EventResponse, TimelineResponse, TimelineTrack} from './schema.gen';
import {SEGMENT_COLORS, STATUS_COLORS} from './style';

const LABEL_W = 240;
const AXIS_H = 20;
const STEP_H = 16;
const LANE_H = 7;
const ROW_H = 17;

export interface EvidencePlace {
  device_id: number | null;
  stream_id: number | null;
  thread: string | null;
}

export interface TimelineOptions {
  load: (w: TimeWindow, width: number) => Promise<TimelineResponse | null>;
  hover: (track: string, t: number, tolerance: number) => Promise<EventResponse | null>;
  onSelect: (check: string, index: number) => void;
}

interface HitBox {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
  check: string;
  index: number;
}

/** Whether a track holds an evidence window's events: its GPU stream (or any stream of the GPU when
 * the evidence names none), or the host thread group of its thread. */
export function trackHolds(track: TimelineTrack, where: EvidencePlace): boolean {
  if (where.thread !== null) {
    if (track.kind !== 'host') return false;
    const group = where.thread.split('/')[0].split(' (')[0];
    return (track.threads ?? []).some((t) => t === where.thread) || track.id === `host/${group}`;
  }
  if (where.device_id === null || track.kind !== 'stream' || track.device_id !== where.device_id) return false;
  return where.stream_id === null || track.stream_id === where.stream_id;
}

export class TimelineView {
  readonly element: HTMLElement;
  readonly canvas: HTMLCanvasElement;
  readonly info: HTMLElement;
  private readonly tip: HTMLElement;
  private extent: TimeWindow = {start: 0, end: 1};
  private home: TimeWindow = {start: 0, end: 1};
  private window: TimeWindow = {start: 0, end: 1};
  private data: TimelineResponse | null = null;
  private highlight: {check: string; index: number; start: number; end: number; where: EvidencePlace | null} | null =
    null;
  private hits: HitBox[] = [];
  private markTop = AXIS_H + STEP_H;
  private rowsTop = AXIS_H + STEP_H + LANE_H + 4;
  private timer: number | undefined;
  private hoverTimer: number | undefined;
  private seq = 0;
  private hoverSeq = 0;
  private drag: {x: number; window: TimeWindow} | null = null;
  private dark = false;

  constructor(private readonly opts: TimelineOptions) {
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'timeline';
    this.canvas.tabIndex = 0;
    this.canvas.setAttribute('role', 'img');
    this.canvas.setAttribute(
      'aria-label',
      'Timeline of GPU streams and host threads. Arrow keys pan, plus and minus zoom, 0 shows the steps.',
    );
    this.canvas.dataset.loaded = '0';
    this.info = document.createElement('div');
    this.info.className = 'muted tl-info';
    this.tip = document.createElement('div');
    this.tip.className = 'tl-tip';
    this.tip.hidden = true;
    this.tip.setAttribute('role', 'tooltip');
    this.element = document.createElement('div');
    this.element.className = 'tl-wrap';
    this.element.append(this.canvas, this.tip);
    this.canvas.addEventListener('wheel', (e) => this.onWheel(e), {passive: false});
    this.canvas.addEventListener('mousedown', (e) => this.onDown(e));
    this.canvas.addEventListener('mouseleave', () => this.hideTip());
    window.addEventListener('mousemove', (e) => this.onMove(e));
    window.addEventListener('mouseup', () => this.onUp());
    this.canvas.addEventListener('keydown', (e) => this.onKey(e));
    new ResizeObserver(() => this.resize()).observe(this.canvas);
  }

  setDark(dark: boolean): void {
    this.dark = dark;
    this.draw();
  }

  /** A new profile: frame its steps (the whole capture when it has none). */
  reset(extentMs: number, steps?: TimeWindow): void {
    this.extent = {start: 0, end: Math.max(extentMs, 0.001)};
    this.home = steps && steps.end > steps.start ? fit(steps.start, steps.end, this.extent, 0.02) : {...this.extent};
    this.highlight = null;
    this.canvas.dataset.highlight = '';
    this.canvas.dataset.highlightRows = '';
    this.data = null;
    this.setWindow({...this.home});
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

  /** Zoom to a finding's evidence window and mark it on the rows that hold it. */
  show(check: string, index: number, start: number, end: number, where: EvidencePlace | null = null): void {
    this.highlight = {check, index, start, end, where};
    this.canvas.dataset.highlight = `${check}:${index}`;
    this.canvas.dataset.highlightStart = String(start);
    this.canvas.dataset.highlightEnd = String(end);
    this.setWindow(fit(start, end, this.extent));
  }

  /** Zoom to a time range (a step clicked in the breakdown). */
  zoomTo(start: number, end: number): void {
    this.setWindow(fit(start, end, this.extent, 0.05));
  }

  zoomBy(factor: number): void {
    this.setWindow(zoom(this.window, factor, 0.5, this.extent));
  }

  panBy(frac: number): void {
    this.setWindow(pan(this.window, frac, this.extent));
  }

  /** Back to the steps. */
  resetZoom(): void {
    this.setWindow({...this.home});
  }

  showAll(): void {
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
    const hit = this.hits.find((h) => x >= h.x0 - 3 && x <= h.x1 + 3 && y >= h.y0 && y <= h.y1);
    if (hit) {
      this.opts.onSelect(hit.check, hit.index);
      return;
    }
    this.drag = {x: e.clientX, window: {...this.window}};
    this.canvas.classList.add('dragging');
    this.hideTip();
  }

  private hideTip(): void {
    this.tip.hidden = true;
    window.clearTimeout(this.hoverTimer);
  }

  private placeTip(x: number, y: number, lines: string[]): void {
    this.tip.textContent = '';
    lines.forEach((line, i) => {
      const d = document.createElement('div');
      if (i === 0) d.className = 'tl-tip-title';
      d.textContent = shown(line);
      this.tip.appendChild(d);
    });
    this.tip.hidden = false;
    const w = this.element.clientWidth;
    this.tip.style.left = `${Math.min(x + 14, Math.max(0, w - 360))}px`;
    this.tip.style.top = `${y + 14}px`;
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
    const px = e.clientX - rect.left;
    const y = e.clientY - rect.top;
    if (px < 0 || y < 0 || px > rect.width || y > rect.height) return;
    const row = Math.floor((y - this.rowsTop) / ROW_H);
    const track = this.data && row >= 0 ? this.data.tracks[row] : undefined;
    if (px < LABEL_W) {
      // the label column: the whole label, however long
      if (track) this.placeTip(px, y, [`${track.group} · ${track.label}`, ...(track.threads ?? []).slice(0, 8)]);
      else this.hideTip();
      return;
    }
    const t = toTime(this.window, this.plotWidth(), px - LABEL_W);
    this.info.textContent = shown(`${fmtDuration(t)}` + (track ? ` · ${track.group} · ${track.label}` : ''));
    this.canvas.dataset.cursor = String(t);
    if (!track) {
      this.hideTip();
      return;
    }
    const tolerance = (1.5 * (this.window.end - this.window.start)) / this.plotWidth();
    window.clearTimeout(this.hoverTimer);
    const id = ++this.hoverSeq;
    this.hoverTimer = window.setTimeout(async () => {
      const res = await this.opts.hover(track.id, t, tolerance);
      if (id !== this.hoverSeq) return;
      const ev = res?.event;
      const lines = ev
        ? [
            ev.name,
            ...(ev.op ? [`op ${ev.op}${ev.type ? ` (${ev.type})` : ''}`] : []),
            `${fmtDuration(ev.dur_ms)}, from ${fmtDuration(ev.start_ms)}`,
            ...(ev.thread ? [`thread ${ev.thread}`] : []),
            `cursor ${fmtDuration(t)} · ${track.group} · ${track.label}`,
          ]
        : [`nothing running at ${fmtDuration(t)}`, `${track.group} · ${track.label}`];
      this.canvas.dataset.hovered = ev ? ev.name : '';
      this.placeTip(px, y, lines);
    }, 80);
  }

  private onUp(): void {
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

  private fitLabel(ctx: CanvasRenderingContext2D, label: string, width: number): string {
    const text = shown(label);
    if (ctx.measureText(text).width <= width) return text;
    let lo = 0;
    let hi = text.length;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (ctx.measureText(text.slice(0, mid) + '…').width <= width) lo = mid;
      else hi = mid - 1;
    }
    return text.slice(0, lo) + '…';
  }

  draw(): void {
    const c = this.canvas;
    const dpr = window.devicePixelRatio || 1;
    const W = this.plotWidth();
    const w = this.window;
    const X = (t: number) => LABEL_W + toX(w, W, t);
    // finding markers first: their lanes set the height of the marker band
    const marks = this.data?.findings ?? [];
    const spans = marks.map((f): [number, number] => {
      const x0 = Math.max(LABEL_W, X(f.start_ms));
      return [x0, Math.max(x0 + 3, Math.min(LABEL_W + W, X(f.end_ms)))];
    });
    const laneOf = lanes(spans);
    const laneCount = Math.max(1, ...laneOf.map((l) => l + 1));
    this.markTop = AXIS_H + STEP_H;
    this.rowsTop = this.markTop + laneCount * LANE_H + 4;
    const rows = this.data ? this.data.tracks.length : 0;
    const cssW = c.clientWidth || 800;
    const cssH = this.rowsTop + Math.max(rows, 1) * ROW_H + 6;
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

    // axis: labels in one unit
    ctx.fillStyle = fg2;
    const tickTimes = ticks(w, Math.max(2, Math.floor(W / 110)));
    const labels = tickLabels(tickTimes, w);
    tickTimes.forEach((t, i) => {
      const x = X(t);
      ctx.fillRect(x, AXIS_H - 4, 1, 4);
      ctx.fillText(labels[i], x + 3, AXIS_H / 2);
    });
    c.dataset.ticks = labels.join('|');
    ctx.fillText('steps', 6, AXIS_H + STEP_H / 2);
    ctx.fillText('findings', 6, this.markTop + (laneCount * LANE_H) / 2);

    const highlightRows = new Set<number>();
    if (this.data) {
      if (this.highlight?.where)
        this.data.tracks.forEach((tr, r) => {
          if (trackHolds(tr, this.highlight!.where!)) highlightRows.add(r);
        });
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
        ctx.fillRect(X(s.start_ms), this.rowsTop, 1, rows * ROW_H);
      });
      // findings markers, one lane each where they would overlap
      this.hits = [];
      marks.forEach((f, i) => {
        const [x0, x1] = spans[i];
        const y0 = this.markTop + laneOf[i] * LANE_H;
        ctx.fillStyle = STATUS_COLORS[f.status] ?? fg2;
        const on = this.highlight && this.highlight.check === f.check && this.highlight.index === f.index;
        ctx.globalAlpha = on ? 1 : 0.75;
        ctx.fillRect(x0, y0 + 1, x1 - x0, LANE_H - 2);
        ctx.globalAlpha = 1;
        this.hits.push({x0: x0 - LABEL_W, x1: x1 - LABEL_W, y0, y1: y0 + LANE_H, check: f.check, index: f.index});
      });
      c.dataset.lanes = String(laneCount);
      // rows
      this.data.tracks.forEach((tr, r) => {
        const y = this.rowsTop + r * ROW_H;
        ctx.fillStyle = r % 2 ? (this.dark ? '#242528' : '#fafafa') : this.dark ? '#202124' : '#ffffff';
        ctx.fillRect(LABEL_W, y, W, ROW_H);
        ctx.fillStyle = fg;
        ctx.fillText(this.fitLabel(ctx, `${tr.group} · ${tr.label}`, LABEL_W - 12), 6, y + ROW_H / 2);
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
      ctx.fillText('loading…', LABEL_W + 8, this.rowsTop + ROW_H / 2);
    }
    c.dataset.highlightRows = [...highlightRows].join(',');
    // geometry, for tests that point at a row
    c.dataset.rowsTop = String(this.rowsTop);
    c.dataset.rowHeight = String(ROW_H);
    c.dataset.labelWidth = String(LABEL_W);
    // the selected finding's window, on the rows that hold its events (and its marker lane)
    if (this.highlight) {
      const x0 = Math.max(LABEL_W, X(this.highlight.start));
      const x1 = Math.min(LABEL_W + W, Math.max(X(this.highlight.end), x0 + 2));
      if (x1 > x0) {
        ctx.fillStyle = this.dark ? 'rgba(255,152,0,0.18)' : 'rgba(245,124,0,0.14)';
        ctx.strokeStyle = '#f57c00';
        ctx.lineWidth = 1.5;
        const bands: [number, number][] = highlightRows.size
          ? [...highlightRows].map((r) => [this.rowsTop + r * ROW_H, ROW_H])
          : [[this.rowsTop, rows * ROW_H]];
        for (const [y, h] of bands) {
          ctx.fillRect(x0, y, x1 - x0, h);
          ctx.strokeRect(x0, y + 0.5, x1 - x0, h - 1);
        }
      }
    }
    ctx.fillStyle = line;
    ctx.fillRect(LABEL_W - 1, 0, 1, cssH);
  }
}
