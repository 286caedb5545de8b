import assert from 'node:assert/strict';
import {test} from 'node:test';
import {AcrossHosts} from '../src/schema.gen';
import {bandRange, cellOrigin, rankAt, shade, shadeColor, stripLayout} from '../src/views/rankstrip';

test('8 ranks lie in one row per band; 1,024 in 16 rows of 64 cells still wide and tall enough to point at', () => {
  const eight = stripLayout(8, 1200);
  assert.equal(eight.cols, 8);
  assert.equal(eight.rows, 1);
  assert.equal(eight.cellW, 40); // capped: a few ranks do not stretch over the whole width
  assert.equal(eight.cellH, 22);
  const many = stripLayout(1024, 1200);
  assert.equal(many.cols, 64);
  assert.equal(many.rows, 16);
  assert.ok(many.cellW > 16 && many.cellH === 10, JSON.stringify(many));
  // three bands, none overlapping the next, the canvas as tall as the last one's end
  for (let b = 1; b < 3; b++) assert.ok(many.bandTop[b] >= many.bandTop[b - 1] + many.rows * many.cellH);
  assert.ok(many.height < 600 && many.height >= many.bandTop[2] + many.rows * many.cellH);
});

test("a point on a cell names that cell's rank in every band; the gutter and the space past the last rank name none", () => {
  const n = 1000; // the last row is not full
  const l = stripLayout(n, 1000);
  for (const i of [0, 5, 63, 64, 700, 999])
    for (const b of [0, 1, 2]) {
      const [x, y] = cellOrigin(l, i, b);
      assert.equal(rankAt(l, n, x + l.cellW / 2, y + l.cellH / 2), i);
    }
  assert.equal(rankAt(l, n, 10, l.bandTop[0] + 1), -1);
  const [x, y] = cellOrigin(l, 1000, 0); // where rank 1000 would be
  assert.equal(rankAt(l, n, x + 1, y + 1), -1);
  assert.equal(rankAt(l, n, l.gutter + 1, 0), -1); // above the first band, its scale's line
});

test('each band on its own scale: the least rank is 0, the most 1, all equal 0.5; no value, no shade', () => {
  const ranks = [{compute_ms: 19.6}, {compute_ms: 29.4}, {compute_ms: null}] as unknown as AcrossHosts['ranks'];
  const range = bandRange(ranks, 'compute_ms');
  assert.deepEqual(range, [19.6, 29.4]);
  assert.equal(shade(19.6, 19.6, 29.4), 0);
  assert.equal(shade(29.4, 19.6, 29.4), 1);
  assert.equal(shade(24.5, 19.6, 29.4), 0.5);
  assert.equal(shade(5, 5, 5), 0.5);
  assert.equal(shade(null, 0, 1), null);
  assert.equal(bandRange([] as AcrossHosts['ranks'], 'step_ms'), null);
  // more is the stronger colour in both modes: darker on light, brighter on dark
  const lum = (c: string) =>
    c
      .match(/\d+/g)!
      .map(Number)
      .reduce((a, b) => a + b, 0);
  assert.ok(lum(shadeColor(1, false)) < lum(shadeColor(0, false)));
  assert.ok(lum(shadeColor(1, true)) > lum(shadeColor(0, true)));
});
