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
const NAME_WEIGHT: Record<string, number> = {short_name: 4, name: 4, op: 2, stack: 2, input_shapes: 2};
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

/** A column's width when it is not a name: by its key, else by its unit (the most it takes: see
 * `contentWidth`). */
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

// text widths for content-sized columns: 13 px Roboto's digits and letters average under 7 px; a cell's
// padding 8 px; a header's word 6 px more (its sort arrow wraps below it where it does not fit)
const CHAR_PX = 7;
const PAD_PX = 10;

/** The width a number column's content needs, at most its fixed width: its header's longest word (the
 * header wraps at spaces) and its longest value as shown in `rows`. Without rows, the fixed width. */
export function contentWidth(c: Column, rows: readonly Row[] | undefined): number {
  const most = fixedWidth(c);
  if (!rows || !rows.length) return most;
  const word = Math.max(...c.label.split(/\s+/).map((w) => w.length));
  const value = Math.max(0, ...rows.map((r) => cellText(c, r[c.key]).length));
  return Math.min(most, Math.max(word * CHAR_PX + PAD_PX + 6, value * CHAR_PX + PAD_PX, 36));
}

/** Each column's width for a table `available` px wide (`extra`: fixed columns the view adds, the
 * trace link's included): the numbers at the widths their content in `rows` needs (at most their fixed
 * widths), the names at their minimums and sharing what is left by weight. The widths add up to at
 * least the minimum table, and to `available` when it is wider. */
export function columnWidths(
  columns: Column[],
  available: number,
  extra = TRACE_WIDTH,
  rows?: readonly Row[],
): number[] {
  const widths = columns.map((c) => (isNameColumn(c) ? (NAME_MIN[c.key] ?? 160) : contentWidth(c, rows)));
  const names = columns.map((c, i) => (isNameColumn(c) ? i : -1)).filter((i) => i >= 0);
  let spare = available - extra - widths.reduce((a, b) => a + b, 0);
  // what each name column's longest name needs: a column grows no wider than that while another can
  // use the width (names in 12 px monospace, 7.3 px a character)
  const need = names.map((i) =>
    rows && rows.length
      ? Math.ceil(Math.max(...rows.map((r) => String(r[columns[i].key] ?? '').length)) * 7.3 + 10)
      : Infinity,
  );
  let open = names.map((_, k) => k).filter((k) => widths[names[k]] < need[k]);
  while (spare > 0 && open.length) {
    const weight = open.reduce((a, k) => a + (NAME_WEIGHT[columns[names[k]].key] ?? 2), 0);
    let given = 0;
    for (const [j, k] of open.entries()) {
      const share =
        j === open.length - 1
          ? spare - given
          : Math.floor((spare * (NAME_WEIGHT[columns[names[k]].key] ?? 2)) / weight);
      const add = Math.min(share, Math.max(need[k] - widths[names[k]], 0));
      widths[names[k]] += add;
      given += add;
    }
    spare -= given;
    const still = open.filter((k) => widths[names[k]] < need[k]);
    if (!given || still.length === open.length) break;
    open = still;
  }
  if (spare > 0 && names.length) widths[names[0]] += spare; // every name fits: the first takes the rest
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

/** For each family of names (those with the same first word, words split at underscores), the words
 * every one of them has: what does not tell them apart. A family of one has none. */
export function commonWords(names: readonly string[]): Map<string, Set<string>> {
  const families = new Map<string, string[][]>();
  for (const n of new Set(names)) {
    const words = n.split('_');
    families.set(words[0], [...(families.get(words[0]) ?? []), words]);
  }
  const out = new Map<string, Set<string>>();
  // a word's own name before its numbers (`tilesize` of `tilesize128x128x8`), kept as `tilesize*`
  const withPrefixes = (words: string[]) => [
    ...words.slice(1),
    ...words.slice(1).flatMap((w) => (PREFIXED.exec(w) ? [`${PREFIXED.exec(w)![1]}*`] : [])),
  ];
  for (const [first, members] of families) {
    if (members.length < 2) continue;
    const common = new Set(withPrefixes(members[0]));
    for (const m of members.slice(1)) {
      const has = new Set(withPrefixes(m));
      for (const w of common) if (!has.has(w)) common.delete(w);
    }
    out.set(first, common);
  }
  return out;
}

// a word named before its numbers: `tilesize128x128x8`, `warpsize2x2x1`, `stage3`
const PREFIXED = /^([A-Za-z]{4,})(\d\w*)$/;

/** A name in at most `chars` characters that tells it apart from the others of its family (`common`:
 * `commonWords` of the names shown together): runs of the words all of them share become `…`, the
 * longest run first and only as many as it takes (the first word and the last stay), so
 * `sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize256x128x32_segment_k_off` reads
 * `sm90_…_nt_n_tilesize256x128x32_…_off` beside its siblings; then, if still too long, the middle of
 * what is left is cut (`middleEllipsis`). A name that fits is unchanged. */
export function distinctName(name: string, chars: number, common: Map<string, Set<string>>): string {
  if (name.length <= chars) return name;
  const words = name.split('_');
  const shared = common.get(words[0]);
  if (!shared || words.length < 3) return middleEllipsis(name, chars);
  // the runs of shared words between the first word and the last: [start, end) of each
  const runs: [number, number][] = [];
  for (let i = 1; i < words.length - 1; i++) {
    if (!shared.has(words[i])) continue;
    const last = runs[runs.length - 1];
    if (last && last[1] === i) last[1] = i + 1;
    else runs.push([i, i + 1]);
  }
  const cost = ([a, b]: [number, number]) => words.slice(a, b).join('_').length;
  const cut = new Set<number>(); // runs made `…`
  const text = () => {
    const out: string[] = [];
    for (let i = 0; i < words.length; i++) {
      const r = runs.findIndex(([a]) => a === i);
      if (r >= 0 && cut.has(r)) {
        out.push('…');
        i = runs[r][1] - 1;
      } else out.push(words[i]);
    }
    return out.join('_');
  };
  // the longest runs first: each saves the most; a run of one character saves nothing
  const order = runs.map((_, k) => k).sort((x, y) => cost(runs[y]) - cost(runs[x]));
  let shown = name;
  for (const k of order) {
    if (shown.length <= chars || cost(runs[k]) <= 1) break;
    cut.add(k);
    shown = text();
  }
  // then the names its words' numbers share with every sibling (`tilesize128x128x8` reads `128x128x8`)
  for (let i = 1; i < words.length - 1 && shown.length > chars; i++) {
    const m = PREFIXED.exec(words[i]);
    if (m && shared.has(`${m[1]}*`) && !shared.has(words[i])) {
      words[i] = m[2];
      shown = text();
    }
  }
  return shown.length <= chars ? shown : middleEllipsis(shown, chars);
}

/** How many characters of a 12 px monospace name a `width` px cell shows (its padding aside). */
export function charsIn(width: number): number {
  return Math.max(4, Math.floor((width - 10) / 7.3));
}
