/** Database URLs: whether one is a PostgreSQL URL, and how it may be shown (no password). */

/** The URL as it may be shown: no password. */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(not a URL)";
  }
}

/** Why `url` is not a PostgreSQL URL, or null. */
export function urlProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "database is not a URL (expected postgres://user:password@host:port/database)";
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") {
    return `database URL must start with postgres:// (got ${parsed.protocol}//)`;
  }
  return parsed.hostname ? null : "database URL has no host";
}

/** The URL's password (a secret to mask in logs), when it has one. */
export function urlPassword(url: string): string[] {
  try {
    const password = decodeURIComponent(new URL(url).password);
    return password ? [password] : [];
  } catch {
    return [];
  }
}
