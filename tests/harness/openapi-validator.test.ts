import { expect } from 'chai';
import { findOperation, OpenApiValidator } from './openapi-validator.ts';

/** The checks every API test relies on must be able to fail. */
describe('harness: the OpenAPI response validator', () => {
  const validator = new OpenApiValidator();
  const REPO = '01J00000000000000000000000';
  const json = { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'req-1' };
  const envelope = (code: string, requestId = 'req-1') => JSON.stringify({ error: { code, message: 'm', requestId } });
  const room = { repositoryId: REPO, kind: 'repository', state: 'active', persisted: false, messageCount: 0 };

  it('finds operations by method and path template', () => {
    expect(findOperation('GET', `/v1/repositories/${REPO}/room?x=1`)?.operationId).to.equal('getRepositoryRoom');
    expect(findOperation('POST', `/v1/repositories/${REPO}/branches/${REPO}/room/messages`)?.operationId).to.equal('appendBranchMessage');
    expect(findOperation('DELETE', `/v1/repositories/${REPO}/room`)).to.equal(undefined);
  });

  it('accepts a compliant answer', () => {
    expect(validator.problems({ method: 'GET', path: `/v1/repositories/${REPO}/room`, status: 200, headers: json, body: JSON.stringify(room) })).to.deep.equal([]);
    expect(validator.problems({ method: 'GET', path: `/v1/repositories/${REPO}/room`, status: 403, headers: json, body: envelope('AUTHORIZATION_DENIED') })).to.deep.equal([]);
  });

  it('flags a status the operation does not list', () => {
    expect(validator.problems({ method: 'GET', path: `/v1/repositories/${REPO}/room`, status: 409, headers: json, body: envelope('ROOM_SEALED') })).to.have.length(1);
    expect(validator.problems({ method: 'GET', path: `/v1/repositories/${REPO}/room`, status: 500, headers: json, body: envelope('RESPONSE_INVALID') })).to.have.length(1);
  });

  it('flags a missing or malformed X-Request-Id and an envelope with another request ID', () => {
    expect(validator.problems({ method: 'GET', path: `/v1/repositories/${REPO}/room`, status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(room) })).to.include('X-Request-Id header missing');
    expect(validator.problems({ method: 'GET', path: `/v1/repositories/${REPO}/room`, status: 200, headers: { ...json, 'x-request-id': 'a b' }, body: JSON.stringify(room) })).to.have.length.greaterThan(0);
    expect(validator.problems({ method: 'GET', path: `/v1/repositories/${REPO}/room`, status: 401, headers: json, body: envelope('TOKEN_REJECTED', 'other') })).to.have.length.greaterThan(0);
  });

  it('flags bodies that break the schema: extra property, missing field, unknown error code', () => {
    expect(validator.problems({ method: 'GET', path: `/v1/repositories/${REPO}/room`, status: 200, headers: json, body: JSON.stringify({ ...room, secret: 1 }) })).to.have.length(1);
    expect(validator.problems({ method: 'GET', path: `/v1/repositories/${REPO}/room`, status: 200, headers: json, body: JSON.stringify({ ...room, persisted: undefined }) })).to.have.length(1);
    expect(validator.problems({ method: 'GET', path: `/v1/repositories/${REPO}/room`, status: 400, headers: json, body: envelope('NOT_A_CODE') })).to.have.length.greaterThan(0);
  });

  it('flags a 429 without an integer Retry-After', () => {
    const path = `/v1/repositories/${REPO}/room/messages`;
    expect(validator.problems({ method: 'POST', path, status: 429, headers: json, body: envelope('RATE_LIMITED') })).to.have.length(1);
    expect(validator.problems({ method: 'POST', path, status: 429, headers: { ...json, 'retry-after': '1.5' }, body: envelope('RATE_LIMITED') })).to.have.length(1);
    expect(validator.problems({ method: 'POST', path, status: 429, headers: { ...json, 'retry-after': '2' }, body: envelope('RATE_LIMITED') })).to.deep.equal([]);
  });

  it('accepts a listed 204 without a body, and flags one with a body', () => {
    const path = `/v1/webhooks/${REPO}`;
    const bare = { 'x-request-id': 'req-1' };
    expect(validator.problems({ method: 'DELETE', path, status: 204, headers: bare, body: '' })).to.deep.equal([]);
    expect(validator.problems({ method: 'DELETE', path, status: 204, headers: json, body: '{}' })).to.have.length(1);
    expect(validator.problems({ method: 'DELETE', path, status: 404, headers: json, body: envelope('RESOURCE_NOT_FOUND') })).to.deep.equal([]);
    // A status the operation does not list is no exception, 204 included.
    expect(validator.problems({ method: 'GET', path: `/v1/repositories/${REPO}/room`, status: 204, headers: bare, body: '' })).to.have.length.greaterThan(0);
  });

  it('requires the envelope outside the operations (404, 405) and JSON everywhere', () => {
    expect(validator.problems({ method: 'GET', path: '/nope', status: 404, headers: json, body: envelope('RESOURCE_NOT_FOUND') })).to.deep.equal([]);
    expect(validator.problems({ method: 'GET', path: '/nope', status: 404, headers: { ...json, 'content-type': 'text/html' }, body: '<h1>Not Found</h1>' })).to.have.length.greaterThan(0);
    expect(validator.problems({ method: 'DELETE', path: `/v1/repositories/${REPO}/room`, status: 405, headers: json, body: '{"message":"no"}' })).to.have.length.greaterThan(0);
    expect(validator.problems({ method: 'GET', path: '/nope', status: 200, headers: json, body: '{}' })).to.have.length(1);
  });
});
