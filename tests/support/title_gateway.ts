/**
 * A gateway for title tests: the background title request (no tools, the
 * title instructions as its system message) is answered by `title`, every
 * other request by a scripted gateway, so the two never race for one script.
 */
import type { Gateway, ProviderEvent, ProviderRequest } from "@floret/engine";
import { type ScriptedGateway, scriptedGateway, type ScriptStep } from "@floret/engine/testing";

/** How the title request is answered. */
export type TitleAnswer =
  | { text: string }
  | { error: string }
  /** Holds the request until `release` resolves, then answers `text`. */
  | { text: string; release: Promise<void> }
  /** Never answers (until aborted). */
  | { hang: true };

/** A routing gateway and what it saw. */
export interface TitleGateway extends Gateway {
  /** The turn's own requests. */
  readonly turns: ScriptedGateway;
  /** Title requests, in order. */
  readonly titleRequests: ProviderRequest[];
  /** Resolves when the first title request has started. */
  readonly titleStarted: Promise<void>;
}

/** Whether a request is the engine's title request. */
export function isTitleRequest(request: ProviderRequest): boolean {
  const first = request.messages[0];
  return request.tools.length === 0 && first?.role === "system" &&
    first.text.startsWith("You write titles");
}

/** Builds the routing gateway. */
export function titleGateway(steps: ScriptStep[], answer: TitleAnswer): TitleGateway {
  const turns = scriptedGateway(steps);
  const titleRequests: ProviderRequest[] = [];
  let started!: () => void;
  const titleStarted = new Promise<void>((resolve) => (started = resolve));
  return {
    info: turns.info,
    turns,
    titleRequests,
    titleStarted,
    stream(request, options): AsyncIterable<ProviderEvent> {
      if (!isTitleRequest(request)) return turns.stream(request, options);
      titleRequests.push(structuredClone(request));
      started();
      return (async function* (): AsyncGenerator<ProviderEvent> {
        if ("hang" in answer) {
          await new Promise((_, reject) => {
            options.signal.addEventListener("abort", () => reject(options.signal.reason), {
              once: true,
            });
          });
          return;
        }
        if ("release" in answer) await answer.release;
        if ("error" in answer) throw new Error(answer.error);
        yield { type: "text", delta: answer.text };
        yield { type: "finish", reason: "stop" };
      })();
    },
  };
}
