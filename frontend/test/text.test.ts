import assert from 'node:assert/strict';
import {test} from 'node:test';
import {inlinePieces, paragraphs} from '../src/text';

test('backticks become code spans; an unclosed one stays text', () => {
  assert.deepEqual(inlinePieces('use `prefetch` and `map(f)` now'), [
    ['use ', false],
    ['prefetch', true],
    [' and ', false],
    ['map(f)', true],
    [' now', false],
  ]);
  assert.deepEqual(inlinePieces('a `b'), [['a `b', false]]);
  assert.deepEqual(inlinePieces('``'), []);
  assert.deepEqual(inlinePieces('<b>x</b>'), [['<b>x</b>', false]]);
});

test('paragraphs split on blank lines', () => {
  assert.deepEqual(paragraphs('one\ntwo\n\n  three  \n\n\n'), ['one\ntwo', 'three']);
});
