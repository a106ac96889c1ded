/**
 * The agent's request size limit (`maxRequestBytes`): a request whose JSON
 * is larger fails the turn `request_too_large` before it is dispatched. The
 * failure tells the numbers, never the prompt's text.
 *
 * @module
 */
import type { Agent } from "../../config/agent.ts";
import type { TurnFailure } from "../../journal/entries.ts";
import type { ProviderRequest } from "../../provider/gateway.ts";

const encoder = new TextEncoder();

/**
 * The size of a request as the engine renders it: the UTF-8 bytes of the
 * JSON of its messages, tools, output budget and reasoning level (what every
 * gateway's wire body is made of; a gateway's own framing adds little).
 *
 * @param request a frozen request
 * @returns its size in bytes
 */
export function requestBytes(request: ProviderRequest): number {
  const body: Record<string, unknown> = { messages: request.messages, tools: request.tools };
  if (request.maxOutputTokens !== undefined) body.maxOutputTokens = request.maxOutputTokens;
  if (request.reasoning !== undefined) body.reasoning = request.reasoning;
  return encoder.encode(JSON.stringify(body)).length;
}

/**
 * The turn's failure when the request is over the agent's limit.
 *
 * @param agent the turn's agent
 * @param request the request about to be sent
 * @returns the failure, or `undefined` when there is no limit or the request fits
 */
export function requestTooLarge(agent: Agent, request: ProviderRequest): TurnFailure | undefined {
  const limit = agent.maxRequestBytes;
  if (limit === undefined) return undefined;
  const bytes = requestBytes(request);
  if (bytes <= limit) return undefined;
  return {
    code: "request_too_large",
    message: `The request is ${bytes} bytes, over the agent's maxRequestBytes of ${limit}`,
  };
}
