/** Why the login form is shown again. */
export type LoginProblem = 'refused' | 'rate-limited' | 'stale-form' | undefined;

const MESSAGES: Record<Exclude<LoginProblem, undefined>, string> = {
  refused: 'That token was not accepted.',
  'rate-limited': 'Too many failed sign-ins from this address; wait a minute and try again.',
  'stale-form': 'This sign-in form expired or came from elsewhere; sign in again here.',
};

/**
 * The sign-in form: the console token (or an operator's bearer token), and the form's CSRF token
 * (login-csrf.ts; base64url, so it needs no escaping). No script, no data.
 */
export function loginPage(problem: LoginProblem, csrfToken: string): string {
  const message = problem === undefined ? '' : `<p class="error" role="alert">${MESSAGES[problem]}</p>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>mcp-tasks console: sign in</title>
<link rel="stylesheet" href="/console/static/console.css">
</head>
<body class="login">
<main>
<h1>mcp-tasks console</h1>
${message}
<form method="post" action="/console/login">
<input type="hidden" name="csrf" value="${csrfToken}">
<label for="token">Console token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Sign in</button>
</form>
<p class="hint">The node's <code>MCP_TASKS_CONSOLE_TOKEN</code>, or a bearer token with the <code>operator</code> scope.</p>
</main>
</body>
</html>
`;
}
