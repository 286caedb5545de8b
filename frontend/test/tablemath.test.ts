import assert from 'node:assert/strict';
import {test} from 'node:test';
import {
  Column,
  TRACE_WIDTH,
  cellText,
  charsIn,
  columnWidths,
  commonWords,
  contentWidth,
  debounce,
  distinctName,
  middleEllipsis,
  nextSort,
  pagesFor,
  shownColumns,
  visibleRange,
} from '../src/tablemath';

test('the rows in the DOM: the viewport and the overscan, clamped at both ends', () => {
  // 100,000 rows of 24 px, a 480 px viewport scrolled to row 1000: rows 1000..1019 visible
  assert.deepEqual(visibleRange(24_000, 480, 24, 100_000, 8), {first: 992, last: 1028});
  // at the top nothing before row 0
  assert.deepEqual(visibleRange(0, 480, 24, 100_000, 8), {first: 0, last: 28});
  // at the bottom (scrollTop = total height - viewport) nothing past the last row
  assert.deepEqual(visibleRange(100_000 * 24 - 480, 480, 24, 100_000, 8), {first: 99_972, last: 100_000});
  // a half-scrolled row counts: 10 px into row 5 shows rows 5..25 (21 rows in 480 px)
  assert.deepEqual(visibleRange(5 * 24 + 10, 480, 24, 100_000, 0), {first: 5, last: 26});
  // fewer rows than fit, an overscrolled bounce (negative), an empty table
  assert.deepEqual(visibleRange(0, 480, 24, 3), {first: 0, last: 3});
  assert.deepEqual(visibleRange(-50, 480, 24, 3, 0), {first: 0, last: 3});
  assert.deepEqual(visibleRange(0, 480, 24, 0), {first: 0, last: 0});
  // a scroll position past the end (the table shrank under it) still shows the last rows
  assert.deepEqual(visibleRange(1_000_000, 480, 24, 10, 2), {first: 7, last: 10});
  // a viewport not laid out yet (height 0) still shows one row and its overscan
  assert.deepEqual(visibleRange(0, 0, 24, 100, 2), {first: 0, last: 3});
});

test('only the visible rows are built, however many the table has', () => {
  for (const total of [10, 1000, 100_000, 1_000_000]) {
    const r = visibleRange(total * 12, 600, 24, total, 8);
    assert.ok(r.last - r.first <= 600 / 24 + 2 * 8 + 1, `${total}: ${r.last - r.first}`);
  }
});

test('the server pages that hold a range', () => {
  assert.deepEqual(pagesFor({first: 0, last: 28}, 200), [0]);
  assert.deepEqual(pagesFor({first: 190, last: 210}, 200), [0, 200]);
  assert.deepEqual(pagesFor({first: 200, last: 400}, 200), [200]);
  assert.deepEqual(pagesFor({first: 99_972, last: 100_000}, 200), [99_800]);
  assert.deepEqual(pagesFor({first: 5, last: 5}, 200), []);
});

test('a header click sorts: numbers largest first, text A to Z, the same column flips', () => {
  assert.deepEqual(nextSort(undefined, undefined, 'total_us', true), {sort: 'total_us', order: 'desc'});
  assert.deepEqual(nextSort('total_us', 'desc', 'name', false), {sort: 'name', order: 'asc'});
  assert.deepEqual(nextSort('total_us', 'desc', 'total_us', true), {sort: 'total_us', order: 'asc'});
  assert.deepEqual(nextSort('total_us', 'asc', 'total_us', true), {sort: 'total_us', order: 'desc'});
});

const col = (key: string, unit: string | null = null, numeric = true) => ({key, label: key, unit, numeric});

test('cells read in their units', () => {
  const us = col('total_us', 'us');
  assert.equal(cellText(us, 1234567.891), '1,234,567.9');
  assert.equal(cellText(us, 0.04), '0.0');
  assert.equal(cellText(col('t', 'ms'), 12.34567), '12.346');
  assert.equal(cellText(col('b', 'bytes'), 34084028416), '31.7 GiB');
  assert.equal(cellText(col('calls'), 100000), '100,000');
  assert.equal(cellText(col('p', 'pct'), 12.345), '12.3');
  assert.equal(cellText(col('tc', null, false), true), 'yes');
  assert.equal(cellText(col('tc', null, false), false), 'no');
  assert.equal(cellText(us, null), '');
  assert.equal(cellText(col('name', null, false), '<b>x</b>'), '<b>x</b>'); // text, never markup
});

test("a kernel's short name is shown, its full name on hover rather than in a column", () => {
  const cols = [col('short_name', null, false), col('calls'), col('name', null, false)];
  assert.deepEqual(
    shownColumns(cols).map((c) => c.key),
    ['short_name', 'calls'],
  );
  assert.deepEqual(
    shownColumns([col('name', null, false), col('input_shapes', null, false)]).map((c) => c.key),
    ['name', 'input_shapes'],
  );
});

test('the filter is sent once the typing stops', async () => {
  const sent: string[] = [];
  const send = debounce((q: string) => sent.push(q), 30);
  send('c');
  send('co');
  send('con');
  assert.deepEqual(sent, []);
  await new Promise((r) => setTimeout(r, 80));
  assert.deepEqual(sent, ['con']);
  send('conv');
  await new Promise((r) => setTimeout(r, 80));
  assert.deepEqual(sent, ['con', 'conv']);
});

// the Kernels table's columns as the route lists them (tables/kernels_table.py), the full name aside
const kcol = (key: string, unit: string | null, numeric: boolean): Column => ({key, label: key, unit, numeric});
const KERNEL_COLUMNS: Column[] = [
  kcol('short_name', null, false),
  kcol('op', null, false),
  kcol('device', null, true),
  kcol('calls', null, true),
  ...['total_us', 'mean_us', 'min_us', 'max_us'].map((k) => kcol(k, 'us', true)),
  kcol('device_share_pct', 'pct', true),
  kcol('grid', null, false),
  kcol('block', null, false),
  kcol('registers', null, true),
  kcol('shared_memory_bytes', 'bytes', true),
  kcol('sm_efficiency_pct', 'pct', true),
  kcol('occupancy_pct', 'pct', true),
  kcol('tensor_cores', null, false),
];
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

test('the Kernels table fits a 1,400 px window: names share what the numbers leave', () => {
  // the card's table is 1,340 px wide in a 1,400 px window (the browser test measures it)
  const w = columnWidths(KERNEL_COLUMNS, 1338);
  assert.equal(sum(w) + TRACE_WIDTH, 1338);
  assert.ok(w[0] >= 220 && w[1] >= 120, String(w));
  assert.ok(w[0] > w[1]); // the kernel's name gets the larger share
  assert.ok(charsIn(w[0]) >= 28, String(charsIn(w[0])));
  // numbers keep their widths in a wider window; the names take the rest
  const wide = columnWidths(KERNEL_COLUMNS, 2000);
  assert.deepEqual(wide.slice(2), w.slice(2));
  assert.equal(sum(wide) + TRACE_WIDTH, 2000);
  // a narrower window: the names at their minimum, the table scrolls
  const narrow = columnWidths(KERNEL_COLUMNS, 800);
  assert.deepEqual([narrow[0], narrow[1]], [220, 120]);
  assert.ok(sum(narrow) + TRACE_WIDTH > 800);
});

test('a long kernel name is cut in its middle: its start and its distinctive end stay', () => {
  const n = 'cutlass_80_tensorop_s1688gemm_128x256_32x3_nt_align1';
  assert.equal(middleEllipsis(n, 60), n);
  const cut = middleEllipsis(n, 29);
  assert.ok(cut.length <= 29, cut);
  assert.ok(cut.startsWith('cutlass_80_') && cut.endsWith('_nt_align1') && cut.includes('…'), cut);
  assert.equal(middleEllipsis('abcdefgh', 4), 'abc…');
  for (const chars of [5, 10, 20, 40]) assert.ok(middleEllipsis(n, chars).length <= chars, String(chars));
});

test('names shown together are cut where they share their words: what tells them apart stays', () => {
  // the five TF32 GEMMs of GPT-2 on an H200 (tests/data/gpu_pairs/gpt2_tf32), as the kernels table names them
  const sm90 = [
    'sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_segment_k_off',
    'sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_segment_k_off',
    'sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize256x128x32_segment_k_off',
    'sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x128x32_segment_k_on',
    'sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x128x32_segment_k_off',
  ];
  const common = commonWords([...sm90, 'fmha_cutlassB_f32_aligned_64x64_k64_sm80', 'cunn_SoftMaxForward']);
  assert.deepEqual([...common.keys()], ['sm90']); // a family of one shares nothing
  // 29 characters, as the column was: every one read `sm90_xmma_…_segment_k_off` cut in its middle
  assert.equal(new Set(sm90.map((n) => middleEllipsis(n, 29))).size, 2);
  const shown = sm90.map((n) => distinctName(n, 36, common));
  assert.deepEqual(shown, [
    'sm90_…_nn_n_tilesize128x128x32_…_off',
    'sm90_…_tn_n_tilesize128x128x32_…_off',
    'sm90_…_nt_n_tilesize256x128x32_…_off',
    'sm90_…_nt_n_tilesize128x128x32_…_on',
    'sm90_…_nt_n_tilesize128x128x32_…_off',
  ]);
  // narrower: the shared name of the tile's numbers goes next, then the middle
  assert.equal(distinctName(sm90[2], 30, common), 'sm90_…_nt_n_256x128x32_…_off');
  assert.ok(distinctName(sm90[2], 20, common).length <= 20);
  // only as many runs as it takes, the longest first; a name that fits is unchanged
  assert.equal(distinctName(sm90[2], 60, common), 'sm90_…_nt_n_tilesize256x128x32_segment_k_off');
  assert.equal(distinctName(sm90[2], 80, common), sm90[2]);
  // a name of no family: its middle
  const fmha = 'fmha_cutlassB_f32_aligned_64x64_k64_sm80';
  assert.equal(distinctName(fmha, 20, common), middleEllipsis(fmha, 20));
});

test('number columns are as wide as their content, the names take what they leave', () => {
  const rows = [{calls: 48, total_us: 53626.6, short_name: 'a'.repeat(72), op: 'aten::mm'}];
  const calls = KERNEL_COLUMNS[3];
  const total = KERNEL_COLUMNS[4];
  // "Calls" and 48: less than the fixed 56 px; 53,626.6 µs: 8 characters
  assert.ok(contentWidth(calls, rows) < 56, String(contentWidth(calls, rows)));
  assert.ok(contentWidth(total, rows) <= 78 && contentWidth(total, rows) >= 8 * 7, String(contentWidth(total, rows)));
  assert.equal(contentWidth(total, undefined), 78);
  const sized = columnWidths(KERNEL_COLUMNS, 1338, TRACE_WIDTH, rows);
  const fixed = columnWidths(KERNEL_COLUMNS, 1338);
  assert.equal(sum(sized) + TRACE_WIDTH, 1338);
  assert.ok(sized[0] > fixed[0], `${sized[0]} ${fixed[0]}`); // the kernel's name gets what the numbers left
  // a short op name's column grows no wider than it needs while the kernel's can use the width
  assert.ok(sized[1] <= Math.ceil('aten::mm'.length * 7.3 + 10) || sized[1] === 120, String(sized[1]));
});
