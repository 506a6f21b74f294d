import { expect } from 'chai';
import { matchPlainRoute } from './plain-route.ts';

describe('matchPlainRoute', () => {
  const routes = [
    { pattern: /^\/v1\/repositories\/(?<repositoryId>[0-9A-Z]+)\/room\/events\/?$/, path: '/v1/repositories/:repositoryId/room/events' },
    { pattern: /^\/v1\/repositories\/(?<repositoryId>[0-9A-Z]+)\/branches\/(?<branchId>[0-9A-Z]+)\/room\/events\/?$/, path: '/v1/repositories/:repositoryId/branches/:branchId/room/events' },
  ];
  it('matches the path alone and hands back named groups as params and the raw query', () => {
    const match = matchPlainRoute('/v1/repositories/R1/branches/B2/room/events?cursor=a%2Bb&x=1', routes);
    expect(match?.route.path).to.equal(routes[1]!.path);
    expect(match?.params).to.deep.equal({ repositoryId: 'R1', branchId: 'B2' });
    expect(match?.query).to.equal('cursor=a%2Bb&x=1');
    expect(matchPlainRoute('/v1/repositories/R1/room/events/', routes)?.params).to.deep.equal({ repositoryId: 'R1' });
  });
  it('leaves other paths alone', () => {
    for (const url of ['/v1/repositories/R1/room/events/x', '/v1/repositories/r%31/room/events', '/healthz', '']) expect(matchPlainRoute(url, routes), url).to.equal(undefined);
  });
});
