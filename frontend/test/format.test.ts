import assert from 'node:assert/strict';
import {test} from 'node:test';
import {
  NAME_MAX,
  fmtBytes,
  fmtDuration,
  fmtPct,
  fmtDurationRange,
  fmtSaving,
  fmtSavingRange,
  savingText,
  fmtValue,
  fmtWindow,
  shortName,
  statusLabel,
  statusRank,
} from '../src/format';

test('percentages', () => {
  assert.equal(fmtPct(61.743), '61.7%');
  assert.equal(fmtPct(0), '0.0%');
  assert.equal(fmtPct(null), 'n/a');
  assert.equal(fmtPct(NaN), 'n/a');
});

test('durations pick a unit by size', () => {
  assert.equal(fmtDuration(23.368), '23.37 ms');
  assert.equal(fmtDuration(123.45), '123.5 ms');
  assert.equal(fmtDuration(1500), '1.50 s');
  assert.equal(fmtDuration(0.42), '420 µs');
  assert.equal(fmtDuration(0.0219), '21.9 µs');
  assert.equal(fmtDuration(0.0000005), '1 ns');
  assert.equal(fmtDuration(0), '0 ms');
  assert.equal(fmtDuration(undefined), 'n/a');
});

test('bytes', () => {
  assert.equal(fmtBytes(512), '512 B');
  assert.equal(fmtBytes(8 * 1024 * 1024), '8.0 MiB');
  assert.equal(fmtBytes(40 * 2 ** 30), '40.0 GiB');
});

test('values with units and savings', () => {
  assert.equal(fmtValue(61.743, '%'), '61.7%');
  assert.equal(fmtValue(14.43, 'ms'), '14.43 ms');
  assert.equal(fmtValue(3, 'calls'), '3 calls');
  assert.equal(fmtValue(0.16666667, ''), '0.167');
  assert.equal(fmtValue('off', ''), 'off');
  assert.equal(fmtValue(null, 'ms'), 'n/a');
  assert.equal(fmtSaving(14.43, 61.74), '14.43 ms/step (61.7%)');
  assert.equal(fmtSaving(null, null), '');
});

test('saving ranges: both ends in one unit, three significant digits; a point when there is no range', () => {
  assert.equal(fmtDurationRange(36.2049, 59.11), '36.2–59.1 ms');
  assert.equal(fmtDurationRange(0.8, 1.25), '0.80–1.25 ms'); // the unit of the larger end
  assert.equal(fmtDurationRange(0.0123, 0.0456), '12.3–45.6 µs');
  assert.equal(fmtDurationRange(900, 1500), '0.90–1.50 s');
  assert.equal(fmtDurationRange(120, 350), '120–350 ms');
  assert.equal(fmtDurationRange(0, 0), '0 ms');
  // ends that read alike at three digits: more digits, and one value where they still do (never "133–133")
  assert.equal(fmtDurationRange(133.2, 133.4), '133.2–133.4 ms');
  assert.equal(fmtDurationRange(133.001, 133.002), '133 ms');
  assert.equal(
    savingText({saving_ms: 133, saving_pct: 50, saving_low_ms: 133, saving_high_ms: 133}),
    'saves 133 ms/step',
  );
  const point = {saving_ms: 14.43, saving_pct: 61.74};
  assert.equal(savingText({...point, saving_low_ms: 36.2, saving_high_ms: 59.1}), 'saves 36.2–59.1 ms/step');
  // a report without the fields, or with one end missing, shows the point as before
  assert.equal(savingText(point), '14.43 ms/step (61.7%)');
  assert.equal(savingText({...point, saving_low_ms: null, saving_high_ms: null}), '14.43 ms/step (61.7%)');
  assert.equal(savingText({...point, saving_low_ms: 3, saving_high_ms: null}), '14.43 ms/step (61.7%)');
  assert.equal(fmtSavingRange({saving_ms: null, saving_pct: null, saving_low_ms: NaN, saving_high_ms: 2}), '');
  assert.equal(savingText({saving_ms: null, saving_pct: null}), '');
});

test('status order', () => {
  assert.ok(statusRank('critical') < statusRank('warning'));
  assert.ok(statusRank('pass') < statusRank('not-applicable'));
  assert.equal(statusLabel('not-applicable'), 'n/a');
});

test('a window shows its two ends apart, and its length', () => {
  // the partial-capture demo's input wait: it read "1.79 s–1.79 s"
  assert.equal(fmtWindow(1792.6, 1794.88505), '1792.60–1794.89 ms (2.29 ms)');
  assert.equal(fmtWindow(1800.126164, 1801.208737), '1800.13–1801.21 ms (1.08 ms)');
  assert.equal(fmtWindow(10, 10.05), '10.0000–10.0500 ms (50.0 µs)');
  assert.equal(fmtWindow(0, 1500), '0–1500 ms (1.50 s)');
});

test('long names are shortened to NAME_MAX characters with an ellipsis; short ones kept', () => {
  const kernel =
    'void cudnn::cnn::wgrad_alg0_engine<float, 128, 6, 7, 3, 3, 5, false, 512>(int, int, int, float const*)';
  assert.equal(shortName('volta_sgemm_128x64_nn'), 'volta_sgemm_128x64_nn');
  const s = shortName(kernel);
  assert.equal(s.length, NAME_MAX);
  assert.ok(s.endsWith('…') && kernel.startsWith(s.slice(0, -1)));
  assert.equal(shortName('x'.repeat(NAME_MAX)), 'x'.repeat(NAME_MAX));
  assert.equal(shortName('abcdef', 4), 'abc…');
});
