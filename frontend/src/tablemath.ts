// The table views' arithmetic: which rows a scrolled window shows, which server pages hold them,
// what a click on a column header sorts by, and how a cell reads. Pure functions, unit-tested.

import {fmtBytes} from './format';
import {TableColumn, TableResponse, TableTrace} from './schema.gen';

export interface RowRange {
  first: number; // the first row in the DOM
  last: number; // one past the last row in the DOM
}

/** The rows to put in the DOM for a scroll position: those in the viewport and `overscan` more on
 * each side (so a short scroll shows rows already there), never past either end. */
export function visibleRange(
  scrollTop: number,
  viewportHeight: number,
  rowHeight: number,
  total: number,
  overscan = 8,
): RowRange {
  if (total <= 0 || rowHeight <= 0) return {first: 0, last: 0};
  const top = Math.max(0, scrollTop);
  const first = Math.min(total - 1, Math.floor(top / rowHeight));
  const last = Math.min(total, Math.ceil((top + Math.max(0, viewportHeight)) / rowHeight));
  return {first: Math.max(0, first - overscan), last: Math.min(total, Math.max(last, first + 1) + overscan)};
}

/** The offsets of the server pages (`limit` = pageSize) that hold rows first..last-1. */
export function pagesFor(range: RowRange, pageSize: number): number[] {
  const out: number[] = [];
  if (range.last <= range.first || pageSize <= 0) return out;
  const start = Math.floor(range.first / pageSize) * pageSize;
  for (let o = start; o < range.last; o += pageSize) out.push(o);
  return out;
}

/** A click on a column header: the sorted column flips its order; another column sorts, numbers
 * largest first and text A to Z. */
export function nextSort(
  sort: string | undefined,
  order: Order | undefined,
  column: string,
  numeric: boolean,
): {sort: string; order: Order} {
  if (sort === column) return {sort: column, order: order === 'asc' ? 'desc' : 'asc'};
  return {sort: column, order: numeric ? 'desc' : 'asc'};
}

/** Calls `fn` once `ms` after the last of a burst of calls (typing in the filter box). */
export function debounce<A extends unknown[]>(fn: (...a: A) => void, ms: number): (...a: A) => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return (...a: A) => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      fn(...a);
    }, ms);
  };
}

export type Order = 'asc' | 'desc';

// The `table` route's answer (schema.json TableResponse); rows are read by their columns' keys
export type Column = TableColumn;
export type TableAnswer = TableResponse;
export type Row = Record<string, unknown> & {trace?: TableTrace | null};

/** The columns shown: a kernel's short name, its full name on hover (not a column of its own). */
export function shownColumns(columns: Column[]): Column[] {
  const hasShort = columns.some((c) => c.key === 'short_name');
  return columns.filter((c) => !(hasShort && c.key === 'name'));
}

export function fmtNumber(v: number, digits: number): string {
  return v.toLocaleString('en-US', {minimumFractionDigits: digits, maximumFractionDigits: digits});
}

/** A cell's text as shown: µs and ms with fixed decimals, bytes in binary units, shares in %. */
export function cellText(c: Column, v: unknown): string {
  if (v === null || v === undefined || v === '') return '';
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return '';
    const u = c.unit ?? '';
    if (u === 'bytes' || u === 'B') return fmtBytes(v);
    if (u === 'us' || u === 'µs') return fmtNumber(v, 1);
    if (u === 'ms') return fmtNumber(v, 3);
    if (u === '%' || u === 'pct') return fmtNumber(v, 1);
    return Number.isInteger(v) ? fmtNumber(v, 0) : fmtNumber(v, 2);
  }
  return String(v);
}

// Column widths (px). Numbers take what their values need (headers wrap onto two or three lines);
// names share the rest of the table's width, down to a minimum, so the Kernels table's 16 columns fit
// a 1,400 px window without scrolling sideways.
export const TRACE_WIDTH = 60; // the last column: the row's link to the trace viewer
const NAME_MIN: Record<string, number> = {short_name: 220, name: 220, op: 120, stack: 140, input_shapes: 140};
const NAME_WEIGHT: Record<string, number> = {short_name: 3, name: 3, op: 2, stack: 2, input_shapes: 2};
const FIXED: Record<string, number> = {
  device: 40,
  calls: 56,
  registers: 66, // "Registers" on a line of its own
  grid: 70,
  block: 60,
  slowest: 64,
  tensor_cores: 60,
  sm_efficiency_pct: 68, // "efficiency"
  occupancy_pct: 68, // "occupancy"
};

/** A column's width when it is not a name: by its key, else by its unit. */
function fixedWidth(c: Column): number {
  const by = FIXED[c.key];
  if (by !== undefined) return by;
  const u = c.unit ?? '';
  if (u === 'us' || u === 'µs' || u === 'ms') return 78;
  if (u === 'pct' || u === '%') return 58;
  if (u === 'bytes' || u === 'B') return 70;
  return c.numeric ? 72 : 90; // a count, or a flag's yes/no
}

/** Whether the column holds names (they take the width the numbers leave). */
export function isNameColumn(c: Column): boolean {
  return c.key in NAME_MIN || c.key === 'stage' || c.key === 'label';
}

/** Each column's width for a table `available` px wide (`extra`: fixed columns the view adds, the
 * trace link's included): the numbers at their widths, the names at their minimums and sharing what is
 * left by weight. The widths add up to at least the minimum table, and to `available` when it is wider. */
export function columnWidths(columns: Column[], available: number, extra = TRACE_WIDTH): number[] {
  const widths = columns.map((c) => (isNameColumn(c) ? (NAME_MIN[c.key] ?? 160) : fixedWidth(c)));
  const names = columns.map((c, i) => (isNameColumn(c) ? i : -1)).filter((i) => i >= 0);
  const spare = available - extra - widths.reduce((a, b) => a + b, 0);
  if (spare > 0 && names.length) {
    const weight = names.reduce((a, i) => a + (NAME_WEIGHT[columns[i].key] ?? 2), 0);
    let given = 0;
    for (const [k, i] of names.entries()) {
      const add =
        k === names.length - 1 ? spare - given : Math.floor((spare * (NAME_WEIGHT[columns[i].key] ?? 2)) / weight);
      widths[i] += add;
      given += add;
    }
  }
  return widths;
}

/** A monospace name in at most `chars` characters: cut in its middle, its start and its distinctive
 * end kept, at underscores where one is near (`cutlass_80_…_64x3_nt_align1`); a name that fits
 * unchanged. */
export function middleEllipsis(name: string, chars: number): string {
  if (name.length <= chars) return name;
  if (chars < 5) return name.slice(0, Math.max(chars - 1, 0)) + '…';
  const headLen = Math.floor((chars - 1) * 0.4);
  let head = name.slice(0, headLen);
  let tail = name.slice(name.length - (chars - 1 - headLen));
  const cut = head.lastIndexOf('_');
  if (cut >= headLen / 2) head = head.slice(0, cut + 1); // a whole word before the cut
  const from = tail.indexOf('_');
  if (from > 0 && from <= tail.length / 3) tail = tail.slice(from); // and after it
  return head + '…' + tail;
}

/** How many characters of a 12 px monospace name a `width` px cell shows (its padding aside). */
export function charsIn(width: number): number {
  return Math.max(4, Math.floor((width - 10) / 7.3));
}
