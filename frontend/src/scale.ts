// Timeline scaling: a visible window [start, end] (ms) inside the profile's extent, mapped onto
// a number of pixels. Pure functions, unit-tested.

export interface TimeWindow {
  start: number;
  end: number;
}

export const MIN_SPAN_MS = 0.001; // 1 µs: the deepest zoom

export function clampWindow(w: TimeWindow, extent: TimeWindow): TimeWindow {
  const full = Math.max(extent.end - extent.start, MIN_SPAN_MS);
  let span = Math.min(Math.max(w.end - w.start, MIN_SPAN_MS), full);
  let start = Math.min(Math.max(w.start, extent.start), extent.start + full - span);
  if (!Number.isFinite(start)) start = extent.start;
  if (!Number.isFinite(span)) span = full;
  return {start, end: start + span};
}

export function toX(w: TimeWindow, width: number, t: number): number {
  return ((t - w.start) / (w.end - w.start)) * width;
}

export function toTime(w: TimeWindow, width: number, x: number): number {
  return w.start + (x / width) * (w.end - w.start);
}

/** Zoom by `factor` (< 1 zooms in) keeping the time under `anchorFrac` (0..1 of the width) fixed. */
export function zoom(w: TimeWindow, factor: number, anchorFrac: number, extent: TimeWindow): TimeWindow {
  const anchor = w.start + anchorFrac * (w.end - w.start);
  const span = (w.end - w.start) * factor;
  return clampWindow({start: anchor - anchorFrac * span, end: anchor - anchorFrac * span + span}, extent);
}

/** Move by `frac` of the visible span (negative: earlier). */
export function pan(w: TimeWindow, frac: number, extent: TimeWindow): TimeWindow {
  const d = (w.end - w.start) * frac;
  return clampWindow({start: w.start + d, end: w.end + d}, extent);
}

/** A window showing [start, end] with a margin of `margin` of its span on each side. */
export function fit(start: number, end: number, extent: TimeWindow, margin = 0.15): TimeWindow {
  const span = Math.max(end - start, MIN_SPAN_MS);
  return clampWindow({start: start - span * margin, end: end + span * margin}, extent);
}

/** About `target` round tick times inside the window (1, 2, 5 x 10^k ms apart). */
export function ticks(w: TimeWindow, target = 8): number[] {
  const span = w.end - w.start;
  if (!(span > 0)) return [];
  const raw = span / target;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out: number[] = [];
  for (let t = Math.ceil(w.start / step) * step; t <= w.end + 1e-12; t += step) out.push(Number(t.toPrecision(12)));
  return out;
}

/** Tick labels in one unit, chosen from the window's span, with as many decimals as the tick step
 * needs: ["0 ms", "5 ms", "10 ms"], never a mix of "500 µs" and "1.00 ms". */
export function tickLabels(tickTimes: number[], w: TimeWindow): string[] {
  const span = w.end - w.start;
  const [unit, scale] = span >= 2000 ? ['s', 1e-3] : span >= 2 ? ['ms', 1] : span >= 0.002 ? ['µs', 1e3] : ['ns', 1e6];
  const step = tickTimes.length > 1 ? Math.abs(tickTimes[1] - tickTimes[0]) * scale : span * scale;
  const decimals = step > 0 ? Math.max(0, Math.min(6, -Math.floor(Math.log10(step) + 1e-9))) : 0;
  return tickTimes.map((t) => `${(t * scale).toFixed(decimals)} ${unit}`);
}

/** Lanes for intervals drawn in one row so that none overlaps another in its lane: the lane of
 * each, in input order (at most `maxLanes`; beyond that the last lane is shared). */
export function lanes(spans: [number, number][], gap = 2, maxLanes = 4): number[] {
  const order = spans.map((_, i) => i).sort((a, b) => spans[a][0] - spans[b][0]);
  const ends: number[] = [];
  const out = new Array<number>(spans.length).fill(0);
  for (const i of order) {
    const [x0, x1] = spans[i];
    let lane = ends.findIndex((e) => e + gap <= x0);
    if (lane < 0) lane = ends.length < maxLanes ? ends.length : maxLanes - 1;
    ends[lane] = Math.max(ends[lane] ?? -Infinity, x1);
    out[i] = lane;
  }
  return out;
}
