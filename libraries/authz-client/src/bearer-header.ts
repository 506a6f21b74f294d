import { AppError } from '@chat/contracts';

/** Tokens larger than this are refused before any parsing. */
const MAX_TOKEN_BYTES = 8192;

/** Three base64url segments: a JWS in compact form. A JWE has five and never matches. */
const JWS_COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** The client-facing refusal; it never quotes the token. */
export function tokenRejected(cause?: unknown): AppError {
  return new AppError('TOKEN_REJECTED', 'The bearer token was rejected.', cause === undefined ? {} : { cause });
}

/**
 * Extracts a compact JWS from an `Authorization` value. A missing or blank header means no credential
 * (`AUTHENTICATION_REQUIRED`); any other scheme (Basic included), a malformed or oversized token means
 * a credential that is refused (`TOKEN_REJECTED`).
 */
export function extractBearerToken(authorizationHeader: string | undefined): string {
  if (authorizationHeader === undefined || authorizationHeader.trim() === '') {
    throw new AppError('AUTHENTICATION_REQUIRED', 'A bearer token is required.');
  }
  if (authorizationHeader.length > MAX_TOKEN_BYTES + 16) throw tokenRejected();
  const match = /^Bearer +(\S+) *$/i.exec(authorizationHeader);
  const token = match?.[1];
  if (token === undefined || token.length > MAX_TOKEN_BYTES || !JWS_COMPACT.test(token)) throw tokenRejected();
  return token;
}

/**
 * Reads the optional `X-Service-Core-Authorization` value of an append: undefined when absent, the
 * token when bearer-form, else `CORE_RESOURCE_TOKEN_REJECTED`. Whether it is required is the caller's rule.
 */
export function parseCoreResourceHeader(headerValue: string | undefined): string | undefined {
  if (headerValue === undefined || headerValue.trim() === '') return undefined;
  const token = /^Bearer +(\S+) *$/i.exec(headerValue)?.[1];
  if (token === undefined || token.length > MAX_TOKEN_BYTES || !JWS_COMPACT.test(token)) {
    throw new AppError('CORE_RESOURCE_TOKEN_REJECTED', 'The core resource token was rejected.');
  }
  return token;
}
