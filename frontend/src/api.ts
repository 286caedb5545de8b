// The plugin's JSON routes, relative to the panel's own location (works under --path_prefix and
// /experiment/<id>/).

export interface ApiResult<T> {
  status: number;
  body: T;
}

export async function getJson<T>(
  route: string,
  params: Record<string, string | number | readonly string[] | undefined> = {},
): Promise<ApiResult<T>> {
  // a list is a repeated parameter (the table route's `name`)
  const q = Object.entries(params)
    .flatMap(([k, v]) => (v === undefined ? [] : typeof v === 'object' ? v.map((x) => [k, x]) : [[k, v]]))
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
  const res = await fetch(`./${route}${q ? `?${q}` : ''}`, {headers: {Accept: 'application/json'}});
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    body = {error: {status: res.status, message: `${res.status} ${res.statusText}`}};
  }
  return {status: res.status, body: body as T};
}

export function errorMessage(body: unknown): string {
  const e = (body as {error?: {message?: string}})?.error;
  return e?.message ?? 'unknown error';
}

export function exportUrl(run: string, host: string): string {
  return `./export?run=${encodeURIComponent(run)}&host=${encodeURIComponent(host)}&download=1`;
}
