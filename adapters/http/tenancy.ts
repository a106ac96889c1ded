/**
 * Tenants over HTTP: `authorize` may answer `{ tenant }` instead of `true`.
 * A tenant's request sees only its tenant's threads: a thread of another
 * tenant (or of none) is answered exactly like a missing one, 404
 * `thread_not_found`, so no route tells a caller that it exists.
 *
 * @module
 */
import { FloretError, type ThreadService } from "@floret/engine";
import { RequestRefused } from "./error_response.ts";

/** What `authorize` may answer: allow (no tenant), allow for a tenant, or deny. */
export type AuthorizeVerdict = boolean | { tenant: string };

/** The outcome of one `authorize` answer. */
export type Admission =
  | { allowed: false }
  | { allowed: true; tenant: string | undefined };

/**
 * Reads `authorize`'s answer. Only `true` or an object with a non-empty
 * string `tenant` (at most 256 characters) lets the request through; any
 * other value denies it, so a mistaken answer never widens access.
 *
 * @param verdict what `authorize` returned
 * @returns whether the request may go on, and for which tenant
 */
export function admissionOf(verdict: unknown): Admission {
  if (verdict === true) return { allowed: true, tenant: undefined };
  if (typeof verdict !== "object" || verdict === null) return { allowed: false };
  const tenant = (verdict as { tenant?: unknown }).tenant;
  if (typeof tenant !== "string" || tenant.length === 0 || tenant.length > 256) {
    return { allowed: false };
  }
  return { allowed: true, tenant };
}

/**
 * Checks that a thread belongs to the caller's tenant before any route
 * touches it. A caller without a tenant (`authorize` answered `true`) may
 * reach every thread, as before tenants existed.
 *
 * @param service the service the app serves
 * @param threadId the thread the route names
 * @param tenant the caller's tenant
 * @throws {FloretError} `thread_not_found` when the thread is missing or belongs to another tenant
 */
export async function assertTenantOwns(
  service: ThreadService,
  threadId: string,
  tenant: string | undefined,
): Promise<void> {
  if (tenant === undefined) return;
  const view = await service.view(threadId);
  if (view.tenant !== tenant) {
    throw new FloretError("thread_not_found", "No such thread");
  }
}

/**
 * Asks `authorize` about one more action a route performs on the caller's
 * behalf (the chat route answering approvals asks about `respond`).
 *
 * @param allowed whether `authorize` allowed the action
 * @throws {RequestRefused} `forbidden` when it did not
 */
export function assertAllowed(allowed: Admission): void {
  if (!allowed.allowed) throw new RequestRefused("forbidden", "the action is not allowed");
}
