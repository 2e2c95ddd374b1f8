// Public surface of the gateway configuration: defaults < demo presets < JSON config file <
// environment < command-line flags. One table (GATEWAY_OPTIONS) drives the flags, the env names,
// --help and docs/gateway.md.
export {
  UserConfigSchema,
  ModelConfigSchema,
  GatewayConfigSchema,
  DEFAULT_CONFIG,
  type UserConfig,
  type GatewayConfig,
  type OptionSpec,
} from './schema';
export { GATEWAY_OPTIONS, helpText } from './options';
export { ConfigError, parseListenAddress, usesDemoModel, resolveGatewayConfig } from './resolve';
export { loadGatewayConfig, USER_FLAG_WARNING, type ParsedCommandLine } from './command-line';
