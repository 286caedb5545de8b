import assert from 'node:assert/strict';
import {test} from 'node:test';
import {shown} from '../src/dom';

test('control and bidirectional characters are shown escaped, as the command shows them', () => {
  // a run named to read as another: right-to-left override, then a bell
  assert.equal(shown('rtl_\u202egpj.exe\x07'), 'rtl_\\u202egpj.exe\\x07');
  assert.equal(shown('a\u2066b\u2069c\u200fd\u061ce'), 'a\\u2066b\\u2069c\\u200fd\\u061ce');
  assert.equal(shown('line\u2028sep\r\x1b[31m\x7f\x9f'), 'line\\u2028sep\\r\\x1b[31m\\x7f\\x9f');
  // tabs, newlines and every other character as they are
  assert.equal(shown('a\tb\nc é 名前 <b>'), 'a\tb\nc é 名前 <b>');
});
