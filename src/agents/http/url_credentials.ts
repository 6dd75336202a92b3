/**
 * Credentials written into a base URL (`https://user:pass@host/…`): sent as a Basic
 * `authorization` header, since a URL with user info is no request target, and never shown.
 */

/** The URL with any `user:password@` removed (what logs and errors print). */
export function withoutUserInfo(href: string): string {
  const url = new URL(href);
  if (!url.username && !url.password) return href;
  url.username = "";
  url.password = "";
  return url.href;
}

/**
 * The URL without its user info, and the headers with Basic credentials made of it unless they
 * carry their own `authorization`.
 */
export function userInfoAsHeader(
  href: string,
  headers: Readonly<Record<string, string>>,
): { url: string; headers: Record<string, string> } {
  const url = new URL(href);
  if (!url.username && !url.password) return { url: href, headers: { ...headers } };
  const own = Object.keys(headers).some((name) => name.toLowerCase() === "authorization");
  if (own) return { url: withoutUserInfo(href), headers: { ...headers } };
  const pair = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  const basic = btoa(String.fromCharCode(...new TextEncoder().encode(pair)));
  return { url: withoutUserInfo(href), headers: { ...headers, authorization: `Basic ${basic}` } };
}
