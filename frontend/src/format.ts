// Formatting of numbers for people. Pure functions, unit-tested.

export const STATUS_ORDER = ['critical', 'warning', 'info', 'pass', 'not-applicable'] as const;
export type Status = (typeof STATUS_ORDER)[number];

export function statusRank(s: string): number {
  const i = (STATUS_ORDER as readonly string[]).indexOf(s);
  return i < 0 ? STATUS_ORDER.length : i;
}

export function statusLabel(s: string): string {
  return s === 'not-applicable' ? 'n/a' : s;
}

export function fmtPct(v: number | null | undefined, digits = 1): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return 'n/a';
  return `${v.toFixed(digits)}%`;
}

/** A duration in ms with a unit that suits its size (s, ms, µs, ns). */
export function fmtDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return 'n/a';
  const a = Math.abs(ms);
  if (a >= 1000) return `${(ms / 1000).toFixed(a >= 10000 ? 1 : 2)} s`;
  if (a >= 1) return `${ms.toFixed(a >= 100 ? 1 : 2)} ms`;
  if (a >= 0.001) return `${(ms * 1000).toFixed(a >= 0.1 ? 0 : 1)} µs`;
  if (a === 0) return '0 ms';
  return `${(ms * 1e6).toFixed(0)} ns`;
}

/** A time window from the profile's start, its two ends in ms with as many decimals as its length
 * needs to tell them apart, and its length: "1792.60–1794.89 ms (2.29 ms)", never "1.79 s–1.79 s". */
export function fmtWindow(startMs: number, endMs: number): string {
  if (!Number.isFinite(startMs) || !Number.isFinite(endMs)) return 'n/a';
  const d = Math.abs(endMs - startMs);
  const decimals = d > 0 ? Math.min(Math.max(Math.ceil(-Math.log10(d)) + 2, 0), 6) : 3;
  return `${startMs.toFixed(decimals)}–${endMs.toFixed(decimals)} ms (${fmtDuration(d)})`;
}

export function fmtBytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return 'n/a';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (Math.abs(v) >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} B` : `${v.toFixed(v >= 100 ? 0 : 1)} ${units[u]}`;
}

/** A measured value with its unit, as the report gives them. */
export function fmtValue(value: unknown, unit: string): string {
  if (value === null || value === undefined) return 'n/a';
  if (typeof value === 'string') return value;
  if (typeof value !== 'number' || !Number.isFinite(value)) return String(value);
  if (unit === '%') return fmtPct(value);
  if (unit === 'ms') return fmtDuration(value);
  const s = Number.isInteger(value)
    ? String(value)
    : value.toFixed(Math.abs(value) >= 100 ? 1 : 3).replace(/\.?0+$/, '');
  return unit ? `${s} ${unit}` : s;
}

/** "14.43 ms/step (61.7%)" or "" when the check estimates no saving. */
export function fmtSaving(ms: number | null | undefined, pct: number | null | undefined): string {
  if (ms === null || ms === undefined) return '';
  return `${fmtDuration(ms)}/step` + (pct === null || pct === undefined ? '' : ` (${fmtPct(pct)})`);
}

/** A range of durations in the unit of its larger end, to three significant digits (a range is an
 * estimate): "36.2–59.1 ms"; ends that read alike at three digits get more, up to five, and a range
 * that still reads as one value is that value ("133 ms", never "133–133 ms"). */
export function fmtDurationRange(lo: number, hi: number): string {
  const a = Math.max(Math.abs(lo), Math.abs(hi));
  const [scale, unit] =
    a >= 1000 ? [1e-3, 's'] : a >= 1 || a === 0 ? [1, 'ms'] : a >= 0.001 ? [1e3, 'µs'] : [1e6, 'ns'];
  const top = a * scale;
  const digits = top > 0 ? Math.max(0, 2 - Math.floor(Math.log10(top))) : 0;
  const ends = (d: number) => [(lo * scale).toFixed(d), (hi * scale).toFixed(d)];
  const [l, h] = ends(digits);
  if (l !== h) return `${l}–${h} ${unit}`;
  for (let d = digits + 1; d <= digits + 2; d++) {
    const [l2, h2] = ends(d);
    if (l2 !== h2) return `${l2}–${h2} ${unit}`;
  }
  return `${l} ${unit}`;
}

/** A finding's estimated saving, a point and, from checks that give one, a range. */
export interface Saving {
  saving_ms: number | null;
  saving_pct: number | null;
  // the report gives both or neither; optional here so that test fixtures may leave them out
  saving_low_ms?: number | null;
  saving_high_ms?: number | null;
}

/** The saving's range, "36.2–59.1 ms/step", or "" when the finding gives none. */
export function fmtSavingRange(f: Saving): string {
  const lo = f.saving_low_ms;
  const hi = f.saving_high_ms;
  if (typeof lo !== 'number' || typeof hi !== 'number' || !Number.isFinite(lo) || !Number.isFinite(hi)) return '';
  return `${fmtDurationRange(lo, hi)}/step`;
}

/** Where a finding's saving is shown in a line: "saves 36.2–59.1 ms/step" with a range, else
 * "14.43 ms/step (61.7%)"; "" when the check estimates no saving. */
export function savingText(f: Saving): string {
  const range = fmtSavingRange(f);
  return range ? `saves ${range}` : fmtSaving(f.saving_ms, f.saving_pct);
}

/** Names longer than this are shortened in tables, the full name on hover. */
export const NAME_MAX = 60;

/** A long name (a templated kernel name runs to hundreds of characters) cut to `max` characters with
 * an ellipsis; short names unchanged. */
export function shortName(name: string, max = NAME_MAX): string {
  return name.length <= max ? name : name.slice(0, max - 1) + '…';
}
