// Pieces the views share.

import {el} from '../dom';
import {statusLabel} from '../format';
import {STATUS_COLORS} from '../style';

export const PROBLEMS = ['critical', 'warning', 'info'];

export function chip(status: string): HTMLElement {
  const c = el('span', {class: 'chip', 'data-status': status}, statusLabel(status));
  c.style.background = STATUS_COLORS[status] ?? '#80868b';
  return c;
}

export function card(id: string, title: string, ...children: (Node | null)[]): HTMLElement {
  return el('section', {class: 'card', id}, el('h2', {}, title), ...children);
}
