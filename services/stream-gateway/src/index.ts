export { createGatewayRuntime, type GatewayRuntime, type GatewayRuntimeOptions } from './runtime.ts';
export { GatewayEnvSchema, gatewayEnvFields, gatewayServiceConfigOf, loadGatewayConfig, type GatewayConfig, type GatewayServiceConfig, type StreamCapsConfig } from './config.ts';
export { createGatewayMetrics, type GatewayMetrics } from './metrics.ts';
export { attachStreamFront, type StreamFrontOptions } from './http/stream-front.ts';
