// Placeholder panel: lists the profile runs the plugin found.
export async function render() {
  const res = await fetch('./runs');
  const data = await res.json();
  const h = document.createElement('h2');
  h.textContent = 'GPU Advisor';
  document.body.appendChild(h);
  const ul = document.createElement('ul');
  for (const r of data.runs) {
    const li = document.createElement('li');
    li.textContent = `${r.run} — ${r.host}`;
    ul.appendChild(li);
  }
  document.body.appendChild(ul);
}
