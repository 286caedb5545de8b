// Building DOM without HTML strings: every string becomes a text node, so names from a profile
// (op names, kernel names, run names) can never become markup or script.

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
      node.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(node, ...children);
  return node;
}

export function append(node: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    node.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
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
