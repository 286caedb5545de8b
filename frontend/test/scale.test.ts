import assert from 'node:assert/strict';
import {test} from 'node:test';
import {clampWindow, fit, MIN_SPAN_MS, pan, ticks, toTime, toX, zoom} from '../src/scale';

const extent = {start: 0, end: 100};

test('time and pixels are inverse', () => {
  const w = {start: 10, end: 30};
  assert.equal(toX(w, 200, 20), 100);
  assert.equal(toTime(w, 200, 100), 20);
  assert.equal(toTime(w, 200, toX(w, 200, 17.5)), 17.5);
});

test('zoom keeps the anchor fixed and stays inside the profile', () => {
  const w = zoom({start: 0, end: 100}, 0.5, 0.5, extent);
  assert.deepEqual(w, {start: 25, end: 75});
  const left = zoom({start: 0, end: 100}, 0.5, 0, extent);
  assert.deepEqual(left, {start: 0, end: 50});
  assert.deepEqual(zoom({start: 40, end: 60}, 10, 0.5, extent), {start: 0, end: 100});
  const deep = zoom({start: 50, end: 50.0001}, 0.01, 0.5, extent);
  assert.ok(deep.end - deep.start >= MIN_SPAN_MS - 1e-12);
});

test('pan and clamp', () => {
  assert.deepEqual(pan({start: 10, end: 20}, 0.5, extent), {start: 15, end: 25});
  assert.deepEqual(pan({start: 90, end: 100}, 1, extent), {start: 90, end: 100});
  assert.deepEqual(clampWindow({start: -5, end: 5}, extent), {start: 0, end: 10});
  assert.deepEqual(clampWindow({start: 50, end: 500}, extent), {start: 0, end: 100});
});

test('fit a window with a margin', () => {
  assert.deepEqual(fit(40, 50, extent, 0.1), {start: 39, end: 51});
  assert.deepEqual(fit(0, 10, extent, 0.5), {start: 0, end: 20});
});

test('ticks are round and inside the window', () => {
  assert.deepEqual(ticks({start: 0, end: 100}, 5), [0, 20, 40, 60, 80, 100]);
  assert.deepEqual(ticks({start: 12.3, end: 12.8}, 5), [12.3, 12.4, 12.5, 12.6, 12.7, 12.8]);
  assert.deepEqual(ticks({start: 5, end: 5}, 5), []);
});

test('tick labels use one unit and the decimals the step needs', async () => {
  const {tickLabels} = await import('../src/scale');
  assert.deepEqual(tickLabels([0, 5, 10], {start: 0, end: 12}), ['0 ms', '5 ms', '10 ms']);
  assert.deepEqual(tickLabels([0.5, 1, 1.5], {start: 0.4, end: 1.6}), ['500 µs', '1000 µs', '1500 µs']);
  assert.deepEqual(tickLabels([1000, 2000], {start: 0, end: 2500}), ['1 s', '2 s']);
  assert.deepEqual(tickLabels([2.2, 2.4, 2.6], {start: 2.1, end: 4.2}), ['2.2 ms', '2.4 ms', '2.6 ms']);
});

test('markers that overlap go to separate lanes', async () => {
  const {lanes} = await import('../src/scale');
  assert.deepEqual(
    lanes([
      [0, 10],
      [5, 15],
      [20, 30],
      [12, 18],
    ]),
    [0, 1, 0, 0],
  );
  assert.deepEqual(
    lanes(
      [
        [0, 10],
        [0, 10],
        [0, 10],
        [0, 10],
        [0, 10],
      ],
      2,
      3,
    ),
    [0, 1, 2, 2, 2],
  );
});
