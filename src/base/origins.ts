/**
 * Where this gateway can be reached: host names as they appear in URLs, loopback and wildcard
 * addresses, the gateway's own origins, and the `host:port` key two URLs share when they reach
 * the same endpoint.
 */

/** `host` as it appears in a URL (IPv6 bracketed). */
export function urlHost(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/** True for names and addresses that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[(.*)\]$/, "$1");
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  if (h === "::1" || h === "0:0:0:0:0:0:0:1") return true;
  if (/^::ffff:127\.\d+\.\d+\.\d+$/.test(h)) return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** A bind address that listens on every interface. */
export function isWildcardHost(host: string): boolean {
  return host === "0.0.0.0" || host === "::" || host === "[::]";
}

/** This machine's interface addresses (none without --allow-sys). */
export function interfaceAddresses(): string[] {
  try {
    return Deno.networkInterfaces().map((i) => i.address);
  } catch {
    return [];
  }
}

/**
 * Every origin under which a gateway bound to host:port is reachable from this machine. A
 * loopback bind adds the other loopback names; a wildcard bind those and each of `interfaces`.
 */
export function selfOriginsFor(host: string, port: number, interfaces: string[] = []): string[] {
  const hosts = new Set<string>([host]);
  const loopback = host === "localhost" || host.startsWith("127.") || host === "::1";
  if (loopback || isWildcardHost(host)) {
    for (const h of ["127.0.0.1", "localhost", "::1"]) hosts.add(h);
  }
  if (isWildcardHost(host)) { for (const address of interfaces) hosts.add(address); }
  return [...hosts].map((h) => `http://${urlHost(h)}:${port}`);
}

/**
 * `host:port` of an http(s) URL with every loopback and wildcard spelling folded into one, or
 * undefined if not such a URL: two URLs with one key reach the same endpoint.
 */
export function endpointKey(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  let host = url.hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (isLoopbackHost(host) || isWildcardHost(host)) host = "loopback";
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return `${host}:${port}`;
}
