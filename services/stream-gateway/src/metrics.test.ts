import { expect } from 'chai';
import { createGatewayMetrics } from './metrics.ts';

async function deliveries(metrics: ReturnType<typeof createGatewayMetrics>): Promise<Record<string, number>> {
  const metric = await metrics.registry.getSingleMetric('chat_gateway_deliveries_total')!.get();
  return Object.fromEntries(metric.values.map((v) => [`${v.labels['kind']}:${v.labels['from']}`, v.value]));
}

describe('gateway metrics: deliveries', () => {
  it('counts every delivery by kind and source, once, however often it is scraped', async () => {
    const metrics = createGatewayMetrics(() => undefined, { defaultMetrics: false });
    for (let i = 0; i < 3; i++) metrics.delivered('message', 'live');
    metrics.delivered('message', 'store');
    metrics.delivered('notification', 'store');
    metrics.delivered('notification', 'store');
    expect(await deliveries(metrics)).to.deep.equal({ 'message:live': 3, 'message:store': 1, 'notification:store': 2 });
    metrics.delivered('message', 'live');
    metrics.delivered('notification', 'live');
    expect(await deliveries(metrics)).to.deep.equal({ 'message:live': 4, 'message:store': 1, 'notification:store': 2, 'notification:live': 1 });
    expect(await deliveries(metrics)).to.deep.equal({ 'message:live': 4, 'message:store': 1, 'notification:store': 2, 'notification:live': 1 });
    expect(await metrics.registry.metrics()).to.include('chat_gateway_deliveries_total{kind="message",from="live"} 4');
  });
});
