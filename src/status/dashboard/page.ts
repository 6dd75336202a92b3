/**
 * The dashboard: one self-contained HTML page (its stylesheet and script inline, nothing fetched
 * from elsewhere) with a Content-Security-Policy that allows exactly that inline code and
 * requests to its own origin.
 */
import { createHash } from "node:crypto";
import { VERSION } from "../../base/version.ts";
import { DASHBOARD_SCRIPT } from "./script.ts";
import { DASHBOARD_STYLE } from "./style.ts";

function cspHash(text: string): string {
  return `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
}

/**
 * Only the inline script and style run; the page talks to its own origin only; no form may
 * submit anywhere (the token form is handled by the script); no other site may frame it.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  `script-src ${cspHash(DASHBOARD_SCRIPT)}`,
  `style-src ${cspHash(DASHBOARD_STYLE)}`,
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

interface PageOptions {
  /** A token is configured: the page asks for it before it reads anything. */
  auth: boolean;
}

export function dashboardPage(options: PageOptions): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Council Gateway</title>
<style>${DASHBOARD_STYLE}</style>
</head>
<body data-auth="${options.auth ? "on" : "off"}">
<header>
  <h1>Council Gateway</h1>
  <span class="meta" id="version">v${VERSION}</span>
  <span class="meta" id="uptime"></span>
  <span class="meta" id="config"></span>
  <span class="meta" id="total"></span>
  <span class="meta" id="health" role="status"></span>
  <span class="meta" id="connection">connecting…</span>
</header>
<form id="login" hidden autocomplete="off">
  <h2>Sign in</h2>
  <label for="token">The gateway's token (SVC_GATEWAY_TOKEN). It stays in this page only.</label>
  <input id="token" type="password" autocomplete="off" spellcheck="false">
  <button type="submit">Show the council</button>
  <div class="error" id="login-error" role="alert"></div>
</form>
<main id="dashboard" hidden>
  <section><h2>Live turns</h2><div id="live"><p class="empty">Connecting…</p></div></section>
  <section><h2>Spend over time</h2><div id="spend"></div></section>
  <section><h2>Agents since start</h2><div id="agents"></div></section>
  <section><h2>Seats: what each member does for the council</h2><div id="seats"></div></section>
  <section><h2>Recent turns</h2><div id="recent"></div></section>
  <section id="team-section" hidden><h2>Team</h2><div id="team"></div></section>
</main>
<script>${DASHBOARD_SCRIPT}</script>
</body>
</html>
`;
}
