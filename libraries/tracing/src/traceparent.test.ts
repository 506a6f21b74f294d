import { TraceFlags, trace } from '@opentelemetry/api';
import { expect } from 'chai';
import { contextOfTraceparent, formatTraceparent, parseTraceparent } from './traceparent.ts';

describe('traceparent', () => {
  const traceId = '0af7651916cd43dd8448eb211c80319c';
  const spanId = 'b7ad6b7169203331';

  it('writes a span context as version 00 and reads it back as a remote parent', () => {
    const value = formatTraceparent({ traceId, spanId, traceFlags: TraceFlags.SAMPLED });
    expect(value).to.equal(`00-${traceId}-${spanId}-01`);
    expect(parseTraceparent(value)).to.deep.equal({ traceId, spanId, traceFlags: TraceFlags.SAMPLED, isRemote: true });
    expect(formatTraceparent({ traceId, spanId, traceFlags: TraceFlags.NONE })).to.equal(`00-${traceId}-${spanId}-00`);
  });

  it('keeps only the sampled flag, and reads a later version with more fields', () => {
    expect(parseTraceparent(`00-${traceId}-${spanId}-03`)?.traceFlags).to.equal(TraceFlags.SAMPLED);
    expect(parseTraceparent(`01-${traceId}-${spanId}-01-future`)).to.include({ traceId, spanId });
  });

  it('refuses malformed and invalid values, and a context from one has no parent', () => {
    for (const bad of [
      '',
      'garbage',
      `00-${traceId}-${spanId}`,
      `00-${traceId.toUpperCase()}-${spanId}-01`,
      `00-${'0'.repeat(32)}-${spanId}-01`,
      `00-${traceId}-${'0'.repeat(16)}-01`,
      `ff-${traceId}-${spanId}-01`,
      `00-${traceId}-${spanId}-01-extra`,
    ]) {
      expect(parseTraceparent(bad), bad).to.equal(undefined);
      expect(trace.getSpanContext(contextOfTraceparent(bad)), bad).to.equal(undefined);
    }
    expect(trace.getSpanContext(contextOfTraceparent(`00-${traceId}-${spanId}-01`))).to.include({ traceId, spanId });
  });
});
