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
