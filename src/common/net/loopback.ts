/** True for an address only this host can reach (127.0.0.0/8, ::1, localhost, IPv4-mapped 127.x). */
export function isLoopback(host: string): boolean {
  return host === '::1' || host.startsWith('127.') || host === 'localhost' || host.startsWith('::ffff:127.');
}
