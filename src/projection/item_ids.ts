/**
 * The item id scheme: ids derived from journal positions, so a live item and
 * its settled form, and every reload, share one id.
 *
 * @module
 */

/** Builds item ids. */
export const itemIds = {
  user: (turnId: string): string => `${turnId}:user`,
  thinking: (runId: string, step: number): string => `${runId}:${step}:thinking`,
  assistant: (runId: string, step: number): string => `${runId}:${step}:assistant`,
  tool: (runId: string, step: number, callId: string): string => `${runId}:${step}:tool:${callId}`,
  interaction: (interactionId: string): string => `${interactionId}:item`,
  steer: (steerId: string): string => `${steerId}:user`,
};
