// The checklist: every check of the guide, grouped by section, with its status; passes and
// not-applicable checks can be hidden (hidden by default when there are findings).

import {el} from '../dom';
import {statusRank} from '../format';
import {CatalogueEntry, Report} from '../schema.gen';
import {card, chip, PROBLEMS} from './common';

export function checklistView(r: Report, catalogue: CatalogueEntry[], select: (check: string) => void): HTMLElement {
  const c = card('checklist', 'The checklist');
  const problems = r.checks.some((x) => PROBLEMS.includes(x.status));
  const filter = el('input', {type: 'checkbox', id: 'checklist-filter'}) as HTMLInputElement;
  filter.checked = problems;
  const counts = new Map<string, number>();
  for (const x of r.checks) counts.set(x.status, (counts.get(x.status) ?? 0) + 1);
  const summary = el(
    'span',
    {class: 'muted'},
    ['critical', 'warning', 'info', 'pass', 'not-applicable']
      .filter((s) => counts.get(s))
      .map((s) => `${counts.get(s)} ${s === 'not-applicable' ? 'n/a' : s}`)
      .join(' · '),
  );
  c.appendChild(
    el(
      'div',
      {class: 'row'},
      el('label', {for: 'checklist-filter'}, filter, ' Hide passed and not applicable'),
      summary,
    ),
  );
  const list = el('div', {class: 'checks'});
  c.appendChild(list);
  const byId = new Map(r.checks.map((x) => [x.id, x]));
  const order = catalogue.length
    ? catalogue
    : [...r.checks].sort((a, b) => statusRank(a.status) - statusRank(b.status));
  const draw = () => {
    list.textContent = '';
    let section = '';
    for (const entry of order) {
      const f = byId.get(entry.id);
      if (!f) continue;
      if (filter.checked && !PROBLEMS.includes(f.status)) continue;
      if (f.section !== section) {
        section = f.section;
        list.appendChild(el('div', {class: 'section'}, section));
      }
      const name = PROBLEMS.includes(f.status)
        ? el('button', {type: 'button', class: 'link', onclick: () => select(f.id)}, f.id)
        : el('span', {class: 'id'}, f.id);
      list.appendChild(
        el(
          'div',
          {class: 'check', 'data-check': f.id, 'data-status': f.status},
          chip(f.status),
          el(
            'div',
            {},
            name,
            ' ',
            f.title,
            el('div', {class: 'muted'}, f.status === 'not-applicable' ? (f.reason ?? '') : f.summary),
          ),
        ),
      );
    }
  };
  filter.addEventListener('change', draw);
  draw();
  return c;
}
