/**
 * The default web_fetch resolver: the system resolver (`getaddrinfo`, so
 * /etc/hosts counts too) through `node:dns/promises`, every answer returned
 * so that every answer is checked.
 *
 * @module
 */
import { lookup } from "node:dns/promises";

/**
 * Resolves a host name to all of its IPv4 and IPv6 addresses, in the order
 * the system gives them.
 *
 * @param host the name
 * @returns its addresses
 */
export async function systemResolve(host: string): Promise<string[]> {
  const answers = await lookup(host, { all: true, verbatim: true });
  return answers.map((answer) => answer.address);
}
