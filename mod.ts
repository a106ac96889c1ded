/**
 * Floret: a durable engine for interactive AI agents on Deno, Bun and Node.
 *
 * @module
 */
export { FloretError, isFloretError } from "./src/errors.ts";
export type { ErrorCode, TurnFailureCode } from "./src/errors.ts";
export type {
  KvCommit,
  KvCommitResult,
  KvEntry,
  KvKey,
  KvKeyPart,
  KvListOptions,
  KvSelector,
  KvStore,
} from "./src/spi/kv_store.ts";
export { ProviderError } from "./src/provider/provider_error.ts";
export type {
  ProviderErrorInit,
  ProviderErrorKind,
  RetryAdvice,
} from "./src/provider/provider_error.ts";
export type {
  Capabilities,
  FinishReason,
  Gateway,
  GatewayInfo,
  ImageAttachment,
  ProviderEvent,
  ProviderMessage,
  ProviderRequest,
  ProviderTool,
  Usage,
} from "./src/provider/gateway.ts";
export { memoryStore } from "./adapters/storage/memory.ts";
