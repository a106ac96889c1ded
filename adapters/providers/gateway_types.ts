/**
 * The engine types every provider entry takes and returns (the same types as
 * `@floret/engine`), re-exported by each entry so that its documentation is
 * complete on its own.
 *
 * @module
 */
export type {
  Capabilities,
  CitedSource,
  Gateway,
  GatewayInfo,
  HostedToolCall,
  ProviderEvent,
  ProviderMessage,
  ProviderRequest,
  ProviderTool,
  ReasoningEffort,
  Usage,
} from "@floret/engine";
