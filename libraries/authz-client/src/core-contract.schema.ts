import { z } from 'zod';

/** Bodies of core's service API for chat (docs/core-contract.md), each schema with its type. */

const authorizationActionSchema = z.enum(['read', 'write']);
export type AuthorizationAction = z.infer<typeof authorizationActionSchema>;

/**
 * The caller, as core is told it. `tokenId` is the bearer token's `jti` (always for a user, when
 * present for a bot), `clientId` a user token's `client_id`, `credentialId` a bot token's `cid`: core
 * refuses a revoked token, an uninstalled app's token or a revoked credential as `principal_invalid`.
 */
export type CorePrincipal =
  | { kind: 'user'; id: string; tokenId: string; clientId: string }
  | { kind: 'bot'; id: string; credentialId: string; tokenId?: string };

export interface AuthorizationRequest {
  principal: CorePrincipal;
  repositoryId: string;
  branchId?: string;
  action: AuthorizationAction;
}

const idSchema = z.string().min(1).max(256);

/** Unknown extra properties are dropped, so core may add fields without breaking chat. */
export const authorizationDecisionSchema = z.object({
  decision: z.enum(['allow', 'deny', 'principal_invalid']),
  decisionId: idSchema,
  scopeState: z.enum(['active', 'sealed']),
  subject: z.object({ kind: z.enum(['user', 'organization']), id: idSchema }).optional(),
  botCredentialId: idSchema.optional(),
  botGrantId: idSchema.optional(),
});
export type AuthorizationDecision = z.infer<typeof authorizationDecisionSchema>;

const mentionTargetSchema = z.object({ kind: z.enum(['human', 'bot']), id: idSchema });
export type MentionTarget = z.infer<typeof mentionTargetSchema>;

/** The sender of the message whose mentions are resolved. */
interface MentionAuthor {
  kind: 'user' | 'bot';
  id: string;
}

/**
 * A mention lookup. A core resource token is only ever lent by the person who writes the message, so
 * it travels with that person as `author`: core refuses a token whose subject is anyone else.
 */
export type MentionResolutionRequest = {
  repositoryId: string;
  branchId?: string;
  targets: MentionTarget[];
} & (
  | { author?: MentionAuthor; coreResourceToken?: undefined }
  | {
      author: { kind: 'user'; id: string };
      /** The author's core resource token (without `Bearer `); chat requires it for human authors. */
      coreResourceToken: string;
    }
);

export const mentionResolutionSchema = z.object({
  targets: z.array(mentionTargetSchema.extend({ valid: z.boolean() })),
});
export type MentionResolution = z.infer<typeof mentionResolutionSchema>;

/** A discovery call: the repositories where `principal` may `action` (core answers `read` only). */
export interface RepositoryListingRequest {
  principal: CorePrincipal;
  action: 'read';
}

/**
 * Core's discovery answer: every repository the principal may read, archived ones `sealed`, or
 * `principal_invalid` for a revoked token or credential. Unknown extra properties are dropped.
 */
export const repositoryListingSchema = z.discriminatedUnion('decision', [
  z.object({
    decision: z.literal('allow'),
    repositories: z.array(z.object({ repositoryId: idSchema, scopeState: z.enum(['active', 'sealed']) })),
  }),
  z.object({ decision: z.literal('principal_invalid') }),
]);
export type RepositoryListing = z.infer<typeof repositoryListingSchema>;
