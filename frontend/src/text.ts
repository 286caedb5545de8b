// Recommendation text as DOM: paragraphs split on blank lines, `code` spans as <code>. Every piece is a
// text node, so text from a report can never become markup.

import {el} from './dom';

/** Pieces of one paragraph: [text, isCode][]; an unclosed backtick stays literal. */
export function inlinePieces(text: string): [string, boolean][] {
  const out: [string, boolean][] = [];
  let rest = text;
  for (;;) {
    const a = rest.indexOf('`');
    const b = a < 0 ? -1 : rest.indexOf('`', a + 1);
    if (a < 0 || b < 0) {
      if (rest) out.push([rest, false]);
      return out;
    }
    if (a > 0) out.push([rest.slice(0, a), false]);
    if (b > a + 1) out.push([rest.slice(a + 1, b), true]);
    rest = rest.slice(b + 1);
  }
}

export function paragraphs(text: string): string[] {
  return text
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter(Boolean);
}

/** Text with inline code, as a list of <p> elements. */
export function richText(text: string): HTMLElement[] {
  return paragraphs(text).map((p) =>
    el('p', {}, ...inlinePieces(p).map(([s, code]) => (code ? el('code', {}, s) : s))),
  );
}
