import { expect } from 'chai';
import { z } from 'zod';
import { ConfigError, parseEnv, tracingConfigOf, tracingFields } from './index.ts';

describe('tracing configuration', () => {
  const schema = z.object(tracingFields);
  const read = (env: Record<string, string>) => tracingConfigOf(parseEnv(schema, env), 'chat-api');

  it('is off with no endpoint (or an empty one), with the service name and sampler defaults', () => {
    const offs: Array<Record<string, string>> = [{}, { OTEL_EXPORTER_OTLP_ENDPOINT: '' }, { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '' }];
    for (const env of offs) {
      expect(read(env), JSON.stringify(env)).to.deep.equal({
        tracesUrl: undefined,
        serviceName: 'chat-api',
        sampler: 'parentbased_traceidratio',
        samplerRatio: 1,
        exportDelayMs: 5000,
      });
    }
  });

  it("appends OTLP's traces path to the base endpoint, and takes the traces endpoint as given", () => {
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracesUrl).to.equal('http://collector:4318/v1/traces');
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example/otlp/' }).tracesUrl).to.equal('https://collector.example/otlp/v1/traces');
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:9999/traces' }).tracesUrl).to.equal('http://b:9999/traces');
  });

  it('reads the service name, the sampler, its ratio and the export delay', () => {
    expect(
      read({ OTEL_SERVICE_NAME: 'chat-api-eu', OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01', OTEL_BSP_SCHEDULE_DELAY: '1000' }),
    ).to.deep.include({ serviceName: 'chat-api-eu', sampler: 'traceidratio', samplerRatio: 0.01, exportDelayMs: 1000 });
  });

  it('refuses what OpenTelemetry would misread, naming each variable', () => {
    const bad = {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'not a url',
      OTEL_TRACES_SAMPLER: 'jaeger_remote',
      OTEL_TRACES_SAMPLER_ARG: '1.5',
      OTEL_BSP_SCHEDULE_DELAY: '0',
    };
    const refused = (() => {
      try {
        parseEnv(schema, bad);
      } catch (err) {
        return err;
      }
    })();
    expect(refused).to.be.instanceOf(ConfigError);
    for (const variable of Object.keys(bad)) expect((refused as Error).message).to.include(`${variable}:`);
    expect(() => parseEnv(schema, { OTEL_TRACES_SAMPLER_ARG: '-0.1' })).to.throw(ConfigError, /OTEL_TRACES_SAMPLER_ARG/);
  });
});
