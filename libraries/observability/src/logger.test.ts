import { createHmac, randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { createLogger } from './logger.ts';

/** A JWT-shaped token (HS256 over a random payload), as dev-core mints them. */
function fakeJwt(): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const head = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode({ sub: 'u_alice', jti: randomBytes(12).toString('hex'), exp: 2_000_000_000 })}`;
  return `${head}.${createHmac('sha256', randomBytes(32)).update(head).digest('base64url')}`;
}

/** A logger writing into memory, and the JSON lines it wrote. */
function capture(): { logger: ReturnType<typeof createLogger>; lines: () => string[] } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString('utf8'));
      callback();
    },
  });
  const logger = createLogger({ name: 'redaction-test', level: 'info', destination });
  return { logger, lines: () => chunks.join('').split('\n').filter(Boolean) };
}

/** Asserts every line is JSON, none holds the token or either of its signed segments, and `[REDACTED]` is there. */
function expectRedacted(lines: string[], token: string): void {
  const [, payload, signature] = token.split('.');
  expect(lines).to.have.length.greaterThan(0);
  for (const line of lines) {
    expect(() => JSON.parse(line), line).not.to.throw();
    expect(line).not.to.include(token);
    expect(line).not.to.include(payload!);
    expect(line).not.to.include(signature!);
  }
  expect(lines.join('\n')).to.include('[REDACTED]');
}

describe('logger redaction', () => {
  it('redacts Authorization and X-Service-Core-Authorization request headers', () => {
    const token = fakeJwt();
    const coreToken = fakeJwt();
    const { logger, lines } = capture();
    logger.info({ req: { method: 'POST', headers: { authorization: `Bearer ${token}`, 'x-service-core-authorization': `Bearer ${coreToken}` } } }, 'request');
    logger.info({ headers: { authorization: `Bearer ${token}`, 'x-service-core-authorization': `Bearer ${coreToken}` } }, 'outbound call');
    expectRedacted(lines(), token);
    expectRedacted(lines(), coreToken);
    const first = JSON.parse(lines()[0]!) as { req: { method: string; headers: Record<string, string> } };
    expect(first.req.method).to.equal('POST');
    expect(first.req.headers).to.deep.equal({ authorization: '[REDACTED]', 'x-service-core-authorization': '[REDACTED]' });
  });

  it('redacts token fields by name', () => {
    const token = fakeJwt();
    const { logger, lines } = capture();
    logger.info({ token, authorization: `Bearer ${token}`, grant: { token }, resourceToken: token }, 'fields');
    expectRedacted(lines(), token);
  });

  it('scrubs a token inside an error message and its stack', () => {
    const token = fakeJwt();
    const { logger, lines } = capture();
    logger.error({ err: new Error(`core rejected Bearer ${token} for u_alice`) }, 'authorization failed');
    expectRedacted(lines(), token);
    const line = JSON.parse(lines()[0]!) as { err: { message: string; stack: string } };
    expect(line.err.message).to.equal('core rejected Bearer [REDACTED] for u_alice');
    expect(line.err.stack).to.include('[REDACTED]');
  });

  it('scrubs a token in a free-text message, with or without a merge object', () => {
    const token = fakeJwt();
    const { logger, lines } = capture();
    logger.warn(`could not verify ${token}, giving up`);
    logger.warn({ attempt: 2 }, `retrying with ${token}`);
    expectRedacted(lines(), token);
    expect((JSON.parse(lines()[0]!) as { msg: string }).msg).to.equal('could not verify [REDACTED], giving up');
  });

  it('leaves ordinary lines alone (the checks above can fail)', () => {
    const { logger, lines } = capture();
    logger.info({ requestId: '01J0000000000000000000000', status: 201 }, 'request');
    const line = JSON.parse(lines()[0]!) as Record<string, unknown>;
    expect(line).to.include({ requestId: '01J0000000000000000000000', status: 201, msg: 'request' });
    expect(lines()[0]).not.to.include('[REDACTED]');
  });
});

describe('pretty logger', () => {
  it('writes human-readable lines and still redacts tokens', async () => {
    const token = fakeJwt();
    const chunks: string[] = [];
    const { PinoPretty } = await import('pino-pretty');
    const destination = PinoPretty({
      colorize: false,
      destination: new Writable({
        write(chunk: Buffer, _encoding, callback) {
          chunks.push(chunk.toString('utf8'));
          callback();
        },
      }),
      sync: true,
    });
    const logger = createLogger({ name: 'pretty-test', level: 'info', destination });
    logger.info({ requestId: 'r-1', headers: { authorization: `Bearer ${token}` } }, `hello ${token}`);
    const text = chunks.join('');
    expect(text).to.contain('hello [REDACTED]');
    expect(text).to.contain('INFO');
    expect(() => JSON.parse(text)).to.throw();
    expect(text).not.to.include(token.split('.')[1]!);
  });
});
