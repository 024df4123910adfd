// A sign-in as the console's form makes it: GET the form (its CSRF token and cookie), then POST
// the token with both. `form: false` leaves the form's token out, as a cross-site POST would.
export async function postConsoleSignIn(base: string, token: string, options: { form?: boolean } = {}): Promise<Response> {
  const served = await fetch(`${base}/console/login`);
  const html = await served.text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  const cookie = served.headers.getSetCookie().find((value) => value.startsWith('mcp_tasks_console_login='));
  if (csrf === undefined || cookie === undefined) throw new Error(`the sign-in form has no CSRF token (status ${served.status})`);
  const fields: Record<string, string> = options.form === false ? { token } : { token, csrf };
  return fetch(`${base}/console/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookie.split(';')[0]! },
    body: new URLSearchParams(fields),
  });
}
