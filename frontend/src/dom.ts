// Building DOM without HTML strings: every string becomes a text node, so names from a profile
// (op names, kernel names, run names) can never become markup or script; and their control and
// bidirectional characters are shown escaped (`shown`), so that a name cannot show as another.

// Control characters (but tab and newline) and the bidirectional controls and separators, as the
// command escapes them (render.py `_CONTROL`): a run named "rtl_\u202egpj.exe" showed as "rtl_exe.jpg".
const HIDDEN = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

/** Text as shown to people: control and bidirectional characters as escapes (`\x07`, `\u202e`). */
export function shown(text: string): string {
  return text.replace(HIDDEN, (c) => {
    const n = c.charCodeAt(0);
    if (c === '\r') return '\\r';
    return n < 256 ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
  });
}

// attributes people read (the others, a value, an id, a link, are kept exact)
const READ = new Set(['title']);

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | EventListener | undefined>;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (typeof v === 'function') {
      node.addEventListener(k.replace(/^on/, ''), v);
    } else if (k === 'class') {
      node.className = String(v);
    } else if (
      k.startsWith('data-') ||
      k.startsWith('aria-') ||
      [
        'role',
        'title',
        'href',
        'target',
        'rel',
        'type',
        'id',
        'tabindex',
        'for',
        'download',
        'readonly',
        'value',
        'name',
        'colspan',
      ].includes(k)
    ) {
      if (k === 'href' && !/^(https?:|\/|\.\/|\?|#)/.test(String(v))) continue; // no javascript: URLs
      const text = v === true ? '' : String(v);
      node.setAttribute(k, READ.has(k) || k.startsWith('aria-') ? shown(text) : text);
    }
  }
  append(node, ...children);
  return node;
}

export function append(node: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    node.appendChild(
      typeof c === 'string'
        ? document.createTextNode(shown(c))
        : typeof c === 'number'
          ? document.createTextNode(String(c))
          : c,
    );
  }
}

export function clear(node: Node): void {
  while (node.firstChild) node.removeChild(node.firstChild);
}

const SVG = 'http://www.w3.org/2000/svg';

export function svg(tag: string, attrs: Record<string, string | number> = {}, ...children: Child[]): SVGElement {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  append(node, ...children);
  return node;
}
